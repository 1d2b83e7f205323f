"""A Keras model exported for inference as Keras 3's `model.export(filepath)` does: a
SavedModel whose root holds the model's `variables`, `trainable_variables` and
`non_trainable_variables` lists and a `serve` endpoint, with the signatures `serve` and
`serving_default` (inputs keyed by the model's input names)."""

from __future__ import annotations

from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.save_context import save_context
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.module import Module
from ndflow.runtime.function import Function
from ndflow.saved_model.object_graph import ObjectGraph
from ndflow.saved_model.saving import save
from ndflow.saved_model.signatures import model_input_signature
from ndflow.saved_model.table_resources import saves_as_resource


def _model_input_specs(model):
    inputs = getattr(model, "inputs", None)
    if not inputs:  # a subclassed model: the shape its first call built it with
        built = model_input_signature(model)
        if built is not None:
            return [built]
        raise ValueError("The model provided has never been called. It must be called at "
                         "least once before export, or `input_signature` must be given.")
    structure = getattr(model, "_inputs_struct", None)   # (Keras' `input`)
    structure = inputs if structure is None else structure
    return [pack_sequence_as(structure, [TensorSpec(x.shape, x.dtype, getattr(x, "name", None))
                                         for x in flatten(structure)])]


class _ExportArchive(Module):
    # plain attributes here (lists saved as children), not tf.Module's computed properties
    variables = trainable_variables = non_trainable_variables = None

    def __init__(self):
        super().__init__(name="export_archive")


def export_saved_model(model, filepath, verbose=None, input_signature=None) -> None:
    """Writes `model` as an inference SavedModel at `filepath` (Keras' ExportArchive)."""
    with save_context():   # the traces the file keeps: their portable forms
        signature = list(input_signature) if input_signature is not None else \
            _model_input_specs(model)
        archive = _ExportArchive()

        if len(signature) == 1:   # TF names an input-signature's `*args` args_0, args_1, ...
            def serve(args_0, /):
                return model(args_0, training=False)
        else:
            def serve(*args):
                return model(*args, training=False)

        archive.serve = Function(serve, name="serve", input_signature=signature,
                                 autograph=False)
        archive.serve.get_concrete_function()  # builds an unbuilt model's variables
        archive.variables = list(model.variables)
        archive.trainable_variables = list(model.trainable_variables)
        archive.non_trainable_variables = list(model.non_trainable_variables)
        # Keras tracks the model's resources (its lookup layers' tables) in `_misc_assets`
        archive._misc_assets = [node for node in ObjectGraph(model).nodes
                                if saves_as_resource(node)]
        save(archive, filepath, signatures={"serve": archive.serve,
                                            "serving_default": archive.serve})
    if verbose or verbose is None:   # Keras: the endpoint's printed signature, captures too
        lines = archive.serve.get_concrete_function().pretty_printed_signature().split("\n")
        endpoint = "\n".join(["* Endpoint 'serve'"] + lines[1:])
        print(f"Saved artifact at '{filepath}'. The following endpoints are available:\n\n"
              f"{endpoint}")
