"""The gateway's Prometheus metrics: the families (`families`), what a step, a run and a scrape
record (`core`), the per-route series and their labels, the edge's series, the multiprocess
files and the exposition of them all."""
