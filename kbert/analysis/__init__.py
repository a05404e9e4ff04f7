"""Contextual-embedding studies (J&M §11.3; the NAACL 2019 tutorial's §3, "What is in a
representation?").

- `kbert.analysis.contextual_embeddings`: a vector per word or subword from any layers (last,
  last-4 mean or sum, one layer, all layers, a learned scalar mix), windowed, cached on disk.
- `kbert.analysis.wsd`: sense embeddings and nearest-sense word sense disambiguation with
  WordNet's first sense as the fallback (readers in `kbert.data.wordnet`, `kbert.data.raganato`).
- `kbert.analysis.anisotropy`: expected cosine of random words, rogue dimensions, z-scoring, a
  word-in-context similarity check.
- `kbert.analysis.probing`: linear probes per layer and the random-weight control.
- `kbert.analysis.attention`, `kbert.analysis.projection`, `kbert.analysis.figures`: attention
  maps, PCA and t-SNE, and the PNG figures.
"""

from kbert.analysis.anisotropy import (
    ZScorer,
    expected_cosine,
    layer_anisotropy,
    rogue_dimensions,
    word_in_context_similarity,
)
from kbert.analysis.attention import attention_maps, sentence_attention
from kbert.analysis.contextual_embeddings import (
    ContextualEmbeddings,
    contextual_embeddings,
    embed_word_in_context,
    find_word,
    layer_selection,
)
from kbert.analysis.figures import attention_grid_png, layer_curves_png, sense_projection_png
from kbert.analysis.probing import (
    LinearProbe,
    layerwise_probe_accuracy,
    majority_accuracy,
    random_encoder_like,
    train_linear_probe,
)
from kbert.analysis.projection import pca_2d, tsne_2d
from kbert.analysis.wsd import NearestSenseWSD, SenseEmbeddings, WsdPrediction, mfs_predictions

__all__ = [
    "ContextualEmbeddings",
    "LinearProbe",
    "NearestSenseWSD",
    "SenseEmbeddings",
    "WsdPrediction",
    "ZScorer",
    "attention_grid_png",
    "attention_maps",
    "contextual_embeddings",
    "embed_word_in_context",
    "expected_cosine",
    "find_word",
    "layer_anisotropy",
    "layer_curves_png",
    "layer_selection",
    "layerwise_probe_accuracy",
    "majority_accuracy",
    "mfs_predictions",
    "pca_2d",
    "random_encoder_like",
    "rogue_dimensions",
    "sense_projection_png",
    "sentence_attention",
    "train_linear_probe",
    "tsne_2d",
    "word_in_context_similarity",
]
