"""What every layer of the kit shares: the one exception family."""
