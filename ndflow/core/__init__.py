"""Layer 0: dtypes, shapes, graph symbols, errors, devices, configuration. Importing the
package imports none of its modules: the public names they declare are served from the index
(ndflow/core/lazy_api.py), and each module is imported where it is used."""
