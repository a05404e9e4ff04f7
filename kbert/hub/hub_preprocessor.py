"""`HubPreprocessor`: a TF Hub BERT preprocessor, strings in, encoder inputs out."""

import keras

from kbert.hub.hub_inputs import HUB_INPUT_KEYS
from kbert.hub.hub_layer import HubLayer


@keras.saving.register_keras_serializable(package="kbert")
class HubPreprocessor(HubLayer):
    """A TF Hub BERT preprocessor: strings (or a pair) in, encoder inputs out; not trainable.

    Args:
        handle: str or os.PathLike. See `HubLayer`.
        seq_length: int or None, default None. None calls the module (its own length; one
            segment only, a pair uses `bert_pack_inputs` at its default length); an int
            tokenizes with `.tokenize` and packs with `.bert_pack_inputs(..., seq_length)`.
        **kwargs: passed to `keras.layers.Layer` (`name`).

    Raises:
        ValueError: see `HubLayer`; also the module lacks `tokenize` / `bert_pack_inputs`
            when they are needed, or `seq_length` is not a positive int.

    Example:
    >>> preprocessor = HubPreprocessor("/tmp/pre", seq_length=16)  # doctest: +SKIP
    >>> preprocessor(tf.constant(["hello world"]))["input_word_ids"].shape  # doctest: +SKIP
    TensorShape([1, 16])
    """

    def __init__(self, handle, seq_length=None, **kwargs):
        kwargs["trainable"] = False
        for key in ("signature", "output_key", "arguments"):
            kwargs.pop(key, None)
        super().__init__(handle, **kwargs)
        if seq_length is not None and (
            isinstance(seq_length, bool) or not isinstance(seq_length, int) or seq_length < 2
        ):
            raise ValueError(f"seq_length must be None or an int >= 2; received {seq_length!r}")
        self.seq_length = seq_length
        missing = [
            name for name in ("tokenize", "bert_pack_inputs") if not hasattr(self.module, name)
        ]
        if seq_length is not None and missing:
            raise ValueError(
                f"seq_length needs a preprocessor with tokenize and bert_pack_inputs; the "
                f"module at {handle!r} lacks {missing}"
            )
        self._missing_packing = missing

    def call(self, inputs, training=None):
        """Packs texts.

        Args:
            inputs: 1-D string tensor, or a tuple of two (a pair of segments).
            training: ignored.

        Returns:
            dict of int32 `input_word_ids`, `input_mask`, `input_type_ids` (batch, seq_length).
        """
        segments = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
        if len(segments) not in (1, 2):
            raise ValueError(f"expected texts or a pair of texts; received {len(segments)}")
        if self.seq_length is None and len(segments) == 1:
            return self.module(segments[0])
        if self._missing_packing:
            raise ValueError(
                f"packing a pair needs tokenize and bert_pack_inputs; the module lacks "
                f"{self._missing_packing}"
            )
        tokens = [self.module.tokenize(segment) for segment in segments]
        if self.seq_length is None:
            return self.module.bert_pack_inputs(tokens)
        return self.module.bert_pack_inputs(tokens, seq_length=self.seq_length)

    def compute_output_spec(self, inputs, training=None):
        first = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
        return {
            key: keras.KerasTensor((first.shape[0], self.seq_length), dtype="int32")
            for key in HUB_INPUT_KEYS
        }

    def get_config(self):
        config = super().get_config()
        for key in ("signature", "output_key", "arguments"):
            config.pop(key, None)
        config["seq_length"] = self.seq_length
        return config
