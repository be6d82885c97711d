"""Services wire the pure core to the adapters: the claim wrapper and the reconcile pass."""
