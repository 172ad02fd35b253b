"""``tdk plan``: measurements read back, price tables, candidates, capacity and token cost."""
