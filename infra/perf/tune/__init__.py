"""``tdk tune``: the knob space, the search, and the Tritons (local or remote) it measures on."""
