"""``waza optimize``: an adapter proposes candidates, the harness evaluates them."""
