"""`tf.saved_model.SaveOptions` and `LoadOptions`: TensorFlow's arguments, accepted and kept
(ndflow saves and loads on the host; device and sharding options have no effect)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export


@tf_export("saved_model.SaveOptions")
class SaveOptions:
    """Options for `tf.saved_model.save`."""

    __slots__ = ("namespace_whitelist", "save_debug_info", "function_aliases",
                 "experimental_debug_stripper", "experimental_io_device",
                 "experimental_variable_policy", "experimental_custom_gradients",
                 "experimental_image_format", "experimental_skip_saver",
                 "experimental_sharding_callback", "extra_tags")

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None,
                 experimental_variable_policy=None, experimental_custom_gradients=True,
                 experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        self.namespace_whitelist = list(namespace_whitelist or [])
        self.save_debug_info = bool(save_debug_info)
        self.function_aliases = dict(function_aliases or {})
        self.experimental_debug_stripper = experimental_debug_stripper
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_custom_gradients = experimental_custom_gradients
        self.experimental_image_format = experimental_image_format
        self.experimental_skip_saver = experimental_skip_saver
        self.experimental_sharding_callback = experimental_sharding_callback
        self.extra_tags = list(extra_tags or [])


@tf_export("saved_model.LoadOptions", v1=[])
class LoadOptions:
    """Options for `tf.saved_model.load`."""

    __slots__ = ("allow_partial_checkpoint", "experimental_io_device",
                 "experimental_skip_checkpoint", "experimental_variable_policy",
                 "experimental_load_function_aliases")

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_skip_checkpoint=False, experimental_variable_policy=None,
                 experimental_load_function_aliases=False):
        self.allow_partial_checkpoint = bool(allow_partial_checkpoint)
        self.experimental_io_device = experimental_io_device
        self.experimental_skip_checkpoint = bool(experimental_skip_checkpoint)
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_load_function_aliases = bool(experimental_load_function_aliases)
