"""Thin adapters to the outside world: GitHub, the local machine, the clock."""
