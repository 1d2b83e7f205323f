"""Developer tools run as `python -m ndflow.tools.NAME` (layer 7: they may import any layer);
`import ndflow` imports none of them."""
