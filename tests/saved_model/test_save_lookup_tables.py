"""tf.lookup tables saved by tf.saved_model.save: TensorFlow's resource nodes (a
`_create_resource` and an `_initialize` function), the vocabulary file copied into
assets/ and read from there on load. (TensorFlow 2.21 loading such a SavedModel, through
tf.saved_model.load and `saved_model_cli run`, was checked when this was written.)"""

import os
import shutil

import ndflow as tf
from ndflow.core.protos.saved_model_pb import SavedModel


class _Tables(tf.Module):
    def __init__(self, vocab_path):
        super().__init__()
        self.table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            ["a", "b", "c"], tf.constant([1, 2, 3], tf.int64)), -1)
        self.vocab = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
            vocab_path, tf.string, 0, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), 5)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def lookup(self, k):
        return {"ids": self.table.lookup(k), "vocab": self.vocab.lookup(k)}


def test_tables_round_trip_with_the_vocabulary_as_an_asset(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("emerson\nlake\npalmer\n")
    m = _Tables(str(vocab))
    keys = tf.constant(["a", "lake", "zz", "palmer"])
    expected = {k: v.numpy().tolist() for k, v in m.lookup(keys).items()}
    assert expected["ids"] == [1, -1, -1, -1] and expected["vocab"][1:4:2] == [1, 2]
    out = str(tmp_path / "model")
    tf.saved_model.save(m, out)
    os.remove(vocab)  # the loaded table reads assets/vocab.txt
    assert sorted(os.listdir(os.path.join(out, "assets"))) == ["vocab.txt"]

    sm = SavedModel()
    with open(os.path.join(out, "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    nodes = sm.meta_graphs[0].object_graph_def.nodes
    resources = [n for n in nodes if n.WhichOneof("kind") == "resource"]
    assert len(resources) == 2
    for n in resources:
        assert {"_create_resource", "_initialize"} <= {c.local_name for c in n.children}
    ops = {n.op for f in sm.meta_graphs[0].graph_def.library.function for n in f.node_def}
    assert {"HashTableV2", "LookupTableImportV2", "InitializeTableFromTextFileV2",
            "LookupTableFindV2", "StringToHashBucketFast"} <= ops

    moved = str(tmp_path / "moved")
    shutil.move(out, moved)
    loaded = tf.saved_model.load(moved)
    got = loaded.lookup(keys)
    assert {k: v.numpy().tolist() for k, v in got.items()} == expected
    sig = loaded.signatures["serving_default"](k=keys)
    assert sig["vocab"].numpy().tolist() == expected["vocab"]
