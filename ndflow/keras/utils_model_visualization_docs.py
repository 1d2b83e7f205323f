"""The docstrings of keras.utils.model_to_dot and plot_model (attached at their module's end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "model": "a built model.",
    "show_shapes": "whether to show each layer's output shape.",
    "show_dtype": "whether to show each layer's dtype.",
    "show_layer_names": "whether to show the layer names.",
    "rankdir": '"TB" (top to bottom) or "LR" (left to right).',
    "expand_nested": "whether to draw nested models as clusters of their layers.",
    "dpi": "the image resolution.",
    "show_layer_activations": "whether to show Dense/Conv activations.",
    "show_trainable": "whether to mark trainable layers.",
    "splines": "Graphviz's edge routing (\"ortho\", \"polyline\", ...).",
    "**kwargs": "accepted for Keras' signature.",
}


DOCS = docs_with_args(_ARGS, {
    "model_to_dot": (
        "A `pydot.Dot` graph of the model's layers (a `pydot.Cluster` when `subgraph`).\n"
        "\n"
        "    Sequential models chain their layers; functional models draw one edge per tensor a "
        "layer\n"
        "    receives from another; subclassed models are a single node. `expand_nested` draws "
        "nested\n"
        '    Functional/Sequential models as dashed clusters of their layers. `rankdir` ("TB" or\n'
        '    "LR"), `dpi` and `splines` are Graphviz graph attributes.\n'
        "\n"
        "    Needs pydot and Graphviz.",
        ["model", "show_shapes", "show_dtype", "show_layer_names", "rankdir", "expand_nested",
         "dpi", "show_layer_activations", "show_trainable", "splines",
         "subgraph: whether to return a `pydot.Cluster` (for nesting).", "**kwargs"],
        """

    Returns:
      A `pydot.Dot` (or `pydot.Cluster`).

    Raises:
      ValueError: the model is not built.
      ImportError: pydot or Graphviz is missing (outside IPython)."""),
    "plot_model": (
        "Draws the model (`model_to_dot`) into `to_file`, in the format its extension names\n"
        "    (png, svg, pdf, dot, ...; png without one), with Graphviz. Returns an\n"
        "    `IPython.display.Image` of the file where IPython is installed (not for a PDF), "
        "else\n"
        "    None. Needs pydot and Graphviz (without them: an ImportError, or inside IPython a\n"
        "    printed message and nothing drawn).",
        ["model", "to_file: the output file.", "show_shapes", "show_dtype", "show_layer_names",
         "rankdir", "expand_nested", "dpi", "show_layer_activations", "show_trainable", "splines",
         "**kwargs"],
        """

    Returns:
      An `IPython.display.Image`, or None.

    Raises:
      ValueError: the model is not built.
      ImportError: pydot or Graphviz is missing (outside IPython)."""),
})
