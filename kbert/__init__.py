"""kbert: transfer learning in NLP with Keras 3 and TensorFlow.

The library is split by what a reader looks for:

- `kbert.text`: tokenizing and packing inputs, in tf.data and inside exported graphs.
- `kbert.layers`: numeric building blocks (embeddings, attention, transformer block).
- `kbert.models`: the encoder and its configuration presets.
- `kbert.checkpoints`: importing pretrained weights (Hugging Face BERT format, no PyTorch).
- `kbert.data`: dataset readers and the data-directory setting.
- `kbert.analysis`: contextual-embedding studies (WSD, anisotropy, probes, figures).
"""

__version__ = "0.1.0"
