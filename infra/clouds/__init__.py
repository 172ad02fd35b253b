"""One module per cloud that several targets share (its CLI, credentials, identity): what a
target's ``TargetEntry.cloud`` names. Shared code never imports these; a target does."""
