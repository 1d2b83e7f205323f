"""The auto-mixed-precision graph rewrite (TensorFlow's grappler `auto_mixed_precision`), one
module per part: `lists` (allow/infer/deny/clear), `device` (which devices and dtypes),
`graph` (the (node, type attribute) view), `painting` (TF's passes 1-6), `casts` (the final
pass), `dump` (LOG_PATH files) and `auto_mixed_precision` (the pipeline pass)."""
