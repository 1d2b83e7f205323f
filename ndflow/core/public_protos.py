"""TensorFlow's proto classes that TF exports by name (`tf.compat.v1.NodeDef`, `AttrValue`,
`NameAttrList`, `MetaGraphDef`, `TensorInfo`, `LogMessage`, `tf.compat.v1.train.SaverDef`,
`tf.train.ServerDef`): the real protobuf messages (tensorboard's compiled TF protos, or
core/protos where tensorboard lacks one), so they serialize to TensorFlow's bytes."""

from tensorboard.compat.proto import (
    attr_value_pb2,
    event_pb2,
    meta_graph_pb2,
    node_def_pb2,
    saver_pb2,
)

from ndflow.core.api_export import tf_export
from ndflow.core.protos.server_pb import ServerDef

tf_export(v1=["AttrValue"])(attr_value_pb2.AttrValue)
tf_export(v1=["NameAttrList"])(attr_value_pb2.NameAttrList)
tf_export(v1=["NodeDef"])(node_def_pb2.NodeDef)
tf_export(v1=["MetaGraphDef"])(meta_graph_pb2.MetaGraphDef)
tf_export(v1=["TensorInfo"])(meta_graph_pb2.TensorInfo)
tf_export(v1=["LogMessage"])(event_pb2.LogMessage)
tf_export(v1=["train.SaverDef"])(saver_pb2.SaverDef)
tf_export("train.ServerDef")(ServerDef)
