"""`tf.saved_model.experimental.TrackableResource`: an object owning a resource handle (a
variable or table made by a raw op) that functions capture.

A subclass defines `_create_resource()` (returns the handle), and optionally
`_initialize()` and `_destroy_resource()`. `resource_handle` creates the resource on first
use, on the object's device. In a SavedModel the object is a `resource` node whose children
are the three methods traced as functions, `_create_resource`, `_initialize` and
`_destroy_resource` (TF's layout): a loader (TensorFlow's or ndflow's, loading.py) calls the
creator, then the initializer, and the functions that captured the handle take the new one.
Like TF's `Trackable` (not AutoTrackable), its attributes are not checkpoint children.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import device as device_scope
from ndflow.runtime.function import Function


@tf_export("saved_model.experimental.TrackableResource")
class TrackableResource:
    """Holds a resource handle that a tf.function can capture, created by
    `_create_resource`, filled by `_initialize`, released by `_destroy_resource`."""

    def __init__(self, device=""):
        self._resource_handle_value = None
        self._resource_device = device

    @classmethod
    def _resource_type(cls):
        return cls.__name__

    def _create_resource(self):
        """A function that creates a resource handle."""
        raise NotImplementedError("TrackableResource._create_resource not implemented.")

    def _initialize(self):
        """A function that initializes the resource. Optional."""

    def _destroy_resource(self):
        """A function that destroys the resource. Optional."""

    @property
    def _resource_handle(self):
        return self._resource_handle_value

    @_resource_handle.setter
    def _resource_handle(self, value):
        self._resource_handle_value = value

    @property
    def resource_handle(self):
        """The handle of the resource (created on first use)."""
        if self._resource_handle is None:
            with device_scope(self._resource_device):
                self._resource_handle = self._create_resource()
        return self._resource_handle

    @property
    def device(self) -> str:
        """The device saved with the resource node (the placement it was given)."""
        return self._resource_device

    def _checkpoint_children(self):
        return []

    def _saved_model_children(self) -> list:
        """The resource node's functions, traced once per object (saving twice writes the
        same functions)."""
        saved = self.__dict__.get("_saved_model_functions")
        if saved is None:
            def creator():
                return self._create_resource()

            def initializer():
                self._initialize()
                return 1  # TF's dummy output

            def destroyer():
                self._destroy_resource()
                return 1

            saved = [(name, Function(fn, name=fn_name, input_signature=[], autograph=False))
                     for name, fn, fn_name in (
                         ("_create_resource", creator, "_creator"),
                         ("_initialize", initializer, "_initializer"),
                         ("_destroy_resource", destroyer, "_destroyer"))]
            self._saved_model_functions = saved
        return list(saved)

    def __del__(self):
        # TF destroys the resource with its owner; a resource never created is left alone
        # (TF would create one just to destroy it).
        if self.__dict__.get("_resource_handle_value") is None:
            return
        try:
            self._destroy_resource()
        except Exception:  # noqa: BLE001, S110 - a finalizer (also at interpreter exit)
            pass
