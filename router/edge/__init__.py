"""The edge pool: its replicas and where a step goes among them (`pool`), and the scrape of their
load (`scrape`). Forwarding a step to the replica chosen is `router.edge_forward`, in the
engine's layer, so that this package imports nothing above it."""
