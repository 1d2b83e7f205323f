"""`tf.compat.v1.make_template`: a function that creates its variables (with `get_variable`)
on the first call, under a unique variable scope (`my_op`, then `my_op_1` for a second
template of that name), and reuses them on every later call.

In a TF1 graph this is TensorFlow's `Template`: the scope is opened again with `reuse=True`
and the graph's collections say which variables it made. Made in eager mode it is
`EagerTemplate`: eager `get_variable` keeps nothing, so the template keeps its variables in
its own dict (`variable_scope.keeping_variables`, TF's EagerVariableStore) and re-enters its
scope with AUTO_REUSE; this works the same when the template is called inside a
`tf.function` (the variables made while tracing are lifted out of the function graph, as
every variable is). Either form raises TensorFlow's ValueError when a call after the first
creates a trainable variable, with the lines where the template was made appended to the
message of any error raised inside it ("originally defined at:").
"""

from __future__ import annotations

import functools
import traceback

from ndflow.core import context, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.ops import variable_scope as vs

_NEW_TRAINABLE = ("Trainable variable created when calling a template after the first time, "
                  "perhaps you used tf.Variable when you meant tf.get_variable: %s")
_NEW_VARIABLES = ("New variables created when calling a template after the first time, "
                  "perhaps you used tf.Variable when you meant tf.get_variable: %s")


@tf_export(v1=["make_template"])
def make_template(name_, func_, create_scope_now_=False, unique_name_=None,
                  custom_getter_=None, **kwargs):
    """`func_` (with `kwargs` bound) as a `Template`: variables made on the first call under
    the scope `name_` (made unique; `unique_name_` is taken as is), reused afterwards."""
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    if context.executing_eagerly():
        if unique_name_ is not None:
            raise ValueError("unique_name_ cannot be used when eager execution is enabled.")
        return EagerTemplate(name_, func_, create_scope_now=create_scope_now_,
                             custom_getter=custom_getter_)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)


def _skip_common_stack_elements(stacktrace, base_case):
    """The frames of `stacktrace` after those it shares with `base_case`."""
    for i, (trace, base) in enumerate(zip(stacktrace, base_case)):
        if trace != base:
            return stacktrace[i:]
    return stacktrace[-1:]


class Template:
    """A function that makes its variables on the first call and reuses them afterwards (TF1
    graphs; see `make_template`)."""

    def __init__(self, name, func, create_scope_now=False, unique_name=None,
                 custom_getter=None, create_graph_function=False):
        if create_graph_function:
            raise NotImplementedError("create_graph_function is not supported; wrap `func` "
                                      "in tf.function instead.")
        self._func = func
        self._stacktrace = traceback.format_stack()[:-2]
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        if name is None:
            raise ValueError("name cannot be None.")
        if create_scope_now:
            # TF's _pure_variable_scope: the variable scope alone, no name scope
            with vs.variable_scope(unique_name, None if unique_name else name,
                                   custom_getter=custom_getter,
                                   auxiliary_name_scope=False) as scope:
                self._variable_scope = scope
        else:
            self._variable_scope = None
        self._variables_created = False
        self._first_call = True

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._variable_scope:
            with vs.variable_scope(self._variable_scope, reuse=not self._first_call):
                return self._call_func(args, kwargs)
        with vs.variable_scope(self._unique_name, self._name,
                               custom_getter=self._custom_getter) as scope:
            self._variable_scope = scope
            return self._call_func(args, kwargs)

    def _call_func(self, args, kwargs):
        try:
            if self._variables_created:
                graph = context.get_default_graph()
                variables = graph.get_collection_ref(GraphKeys.GLOBAL_VARIABLES)
                trainable = graph.get_collection_ref(GraphKeys.TRAINABLE_VARIABLES)
                vars_at_start, trainable_at_start = len(variables), len(trainable)
                result = self._func(*args, **kwargs)
                if trainable_at_start != len(trainable):
                    raise ValueError(_NEW_TRAINABLE % (trainable[trainable_at_start:],))
                if vars_at_start != len(variables):
                    tf_logging.info(_NEW_VARIABLES, variables[vars_at_start:])
                return result
            if self._first_call:
                self._first_call = False
                try:
                    result = self._func(*args, **kwargs)
                except BaseException:
                    self._first_call = True
                    raise
                self._variables_created = True
                return result
            return self._func(*args, **kwargs)  # a first call running on another thread
        except Exception as exc:
            self._add_definition_site(exc)
            raise

    def _add_definition_site(self, exc: Exception) -> None:
        """Appends where the template was made to the error's message, as TF does."""
        arg0 = exc.args[0] if exc.args else ""
        trace = "".join(_skip_common_stack_elements(self._stacktrace,
                                                    traceback.format_stack()))
        exc.args = (f"{arg0}\n\noriginally defined at:\n{trace}",) + tuple(exc.args[1:])
        if hasattr(exc, "message") and isinstance(exc.message, str):
            try:
                exc.message = exc.args[0]  # an OpError prints its message
            except AttributeError:
                pass

    # -- properties ------------------------------------------------------------------------------
    @property
    def name(self):
        """The name given to this template."""
        return self._name

    @property
    def func(self):
        """The function given to this template."""
        return self._func

    @property
    def variable_scope(self):
        """The variable scope this template made (None before the first call unless
        `create_scope_now_`)."""
        return self._variable_scope

    @property
    def var_scope(self):
        """Deprecated name of `variable_scope`."""
        return self._variable_scope

    @property
    def variable_scope_name(self):
        """The variable scope's name with a trailing "/" (None before it exists)."""
        if self._variable_scope:
            name = self._variable_scope.name
            return name if not name or name[-1] == "/" else name + "/"
        return None

    def _collection(self, key) -> list:
        if not self._variables_created:
            return []
        return context.get_default_graph().get_collection(key, self.variable_scope_name)

    @property
    def global_variables(self):
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self):
        return self._collection(GraphKeys.LOCAL_VARIABLES)

    @property
    def trainable_variables(self):
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self):
        trainable = self.trainable_variables
        return [v for v in self.global_variables if not any(v is t for t in trainable)]

    @property
    def variables(self):
        """The global and local variables this template made."""
        return self.global_variables + self.local_variables

    weights = variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables

    def __repr__(self):
        return f"<{type(self).__name__} {self._name!r} scope={self.variable_scope_name!r}>"


class _EagerTemplateVariableStore:
    """The variables an EagerTemplate made with `get_variable` (by full name), shared with an
    enclosing EagerTemplate's when it is made inside one's call."""

    def __init__(self, variable_scope_name):
        self._variable_scope_name = variable_scope_name
        outer = vs.kept_variables()
        self._vars = outer if outer is not None else {}
        self._used_once = False

    def set_variable_scope_name(self, name) -> None:
        self._variable_scope_name = name

    def as_default(self):
        if not self._used_once:
            outer = vs.kept_variables()
            if outer is not None:
                self._vars = outer
            self._used_once = True
        return vs.keeping_variables(self._vars)

    def _in_scope(self, trainable=None) -> list:
        if self._variable_scope_name is None:
            raise RuntimeError("A variable scope must be set before variables can be "
                               "accessed.")
        prefix = self._variable_scope_name + "/"
        return sorted((v for v in self._vars.values() if v.name.startswith(prefix)
                       and (trainable is None or bool(v.trainable) == trainable)),
                      key=lambda v: v.name)

    def variables(self) -> list:
        return self._in_scope()

    def trainable_variables(self) -> list:
        return self._in_scope(True)

    def non_trainable_variables(self) -> list:
        return self._in_scope(False)


class EagerTemplate(Template):
    """A `Template` made in eager mode: it keeps its variables itself (see the module doc)."""

    def __init__(self, name, func, create_scope_now=False, custom_getter=None,
                 create_graph_function=False):
        if not context.executing_eagerly():
            raise RuntimeError(f"{type(self)} objects can only be used when eager execution "
                               "is enabled, use tf.Template for graph construction")
        super().__init__(name, func, create_scope_now, None, custom_getter,
                         create_graph_function)
        scope_name = self._variable_scope.name if self._variable_scope is not None else None
        self._template_store = _EagerTemplateVariableStore(scope_name)

    def __call__(self, *args, **kwargs):
        if self._variable_scope:
            with vs.variable_scope(self._variable_scope, reuse=vs.AUTO_REUSE), \
                    self._template_store.as_default():
                return self._call_func(args, kwargs)
        with vs.variable_scope(self._unique_name, self._name,
                               custom_getter=self._custom_getter) as scope:
            self._variable_scope = scope
            self._template_store.set_variable_scope_name(scope.name)
            with self._template_store.as_default():
                return self._call_func(args, kwargs)

    def _call_func(self, args, kwargs):
        try:
            vars_at_start = self._template_store.variables()
            trainable_at_start = self._template_store.trainable_variables()
            result = self._func(*args, **kwargs)
            if self._variables_created:
                trainable = self._template_store.trainable_variables()
                if len(trainable_at_start) != len(trainable):
                    raise ValueError(_NEW_TRAINABLE % (_new(trainable, trainable_at_start),))
                variables = self._template_store.variables()
                if len(vars_at_start) != len(variables):
                    tf_logging.info(_NEW_VARIABLES, _new(variables, vars_at_start))
            else:
                self._variables_created = True
            return result
        except Exception as exc:
            self._add_definition_site(exc)
            raise

    @property
    def variables(self):
        return self._template_store.variables() if self._variables_created else []

    @property
    def trainable_variables(self):
        return self._template_store.trainable_variables() if self._variables_created else []

    @property
    def non_trainable_variables(self):
        return self._template_store.non_trainable_variables() \
            if self._variables_created else []

    @property
    def global_variables(self):
        return self.variables

    @property
    def local_variables(self):
        return []

    weights = variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables


def _new(now: list, before: list) -> list:
    """The variables of `now` not in `before` (by identity)."""
    seen = {id(v) for v in before}
    return [v for v in now if id(v) not in seen]
