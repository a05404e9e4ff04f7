"""kbert: transfer learning in NLP with Keras 3 and TensorFlow.

The library is split by what a reader looks for:

- `kbert.text`: tokenizing and packing inputs, in tf.data and inside exported graphs.
- `kbert.layers`: numeric building blocks (embeddings, attention, transformer block).
- `kbert.models`: the encoder and its configuration presets.
- `kbert.checkpoints`: importing pretrained weights (Hugging Face BERT format, no PyTorch).
- `kbert.data`: dataset readers and the data-directory setting.
- `kbert.analysis`: contextual-embedding studies (WSD, anisotropy, probes, figures).
- `kbert.export`: TF Serving SavedModels with the tokenizer inside (`export_saved_model`),
  `models.config` and batching files, the TF Hub BERT interface (`export_hub_encoder`,
  `export_hub_preprocessor`).
- `kbert.hub`: TF2 Hub-format SavedModels as fine-tunable Keras 3 layers (`HubLayer`,
  `HubPreprocessor`, `HubEncoder`, `hub_encoder_model`).
- `kbert.serving`: a TF Serving client: `RestClient` (REST predict API), `GrpcClient` (gRPC
  PredictRequest), and `classify`/`tag`/`answer`/`embed` for the exported signatures.
"""

__version__ = "0.1.0"
