"""TF Hub SavedModels (TF2 format) as fine-tunable Keras 3 layers.

`tensorflow_hub.KerasLayer` is a tf_keras layer: inside a Keras 3 model it does not train
(tensorflow/hub#903). `HubLayer` is a Keras 3 layer instead. It loads the SavedModel
(`tf.saved_model.load`, after `tensorflow_hub.resolve` for tfhub.dev / Kaggle handles, which
caches under `TFHUB_CACHE_DIR`), then wraps each of the module's `tf.Variable`s in a
`keras.Variable`. On the TensorFlow backend `keras.Variable(v)` of an existing `tf.Variable` keeps
that very variable as its storage (`keras_variable.value is v`), so

- the module's restored functions, which captured the variables' handles when they were loaded,
  read exactly what the optimizer writes (`keras_variable.assign(...)` assigns `v`), and
- gradients flow: the tape records the restored function reading `v`, and Keras asks the tape
  for gradients of `v`'s handle.

No values are copied or substituted; Keras only learns which variables exist, which are
trainable (the module's `trainable_variables`, unless the layer is frozen) and how to save them
(`.keras` files hold them as the layer's weights; a loaded `.keras` model reloads the module from
its handle and assigns the saved values into it).

`HubPreprocessor` and `HubEncoder` are the BERT conveniences: text in, encoder inputs out; encoder
inputs in, `pooled_output` / `sequence_output` / `encoder_outputs` out.

Modules: `handles` (resolving and loading a handle), `hub_layer` (`HubLayer`),
`hub_preprocessor`, `hub_encoder` (with `hub_encoder_model`), `hub_inputs` (kbert's input names
and TF Hub's BERT ones). Exporting kbert encoders in this format is `kbert.export.hub_export`.
"""

from kbert.hub.handles import load_module, resolve_handle
from kbert.hub.hub_encoder import HubEncoder, hub_encoder_model
from kbert.hub.hub_inputs import HUB_INPUT_KEYS, hub_text_inputs_from_kbert, kbert_inputs_from_hub
from kbert.hub.hub_layer import HubLayer
from kbert.hub.hub_preprocessor import HubPreprocessor

__all__ = [
    "HUB_INPUT_KEYS",
    "HubEncoder",
    "HubLayer",
    "HubPreprocessor",
    "hub_encoder_model",
    "hub_text_inputs_from_kbert",
    "kbert_inputs_from_hub",
    "load_module",
    "resolve_handle",
]
