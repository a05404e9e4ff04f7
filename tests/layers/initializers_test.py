import itertools

import keras
import numpy as np

from kbert.layers.initializers import clone_initializer
from kbert.models import Encoder


def test_clones_draw_different_values_and_keep_the_settings():
    shared = keras.initializers.TruncatedNormal(stddev=0.5)
    first, second = clone_initializer(shared), clone_initializer(shared)
    assert not np.allclose(first((4, 4)), second((4, 4)))
    assert first.get_config()["stddev"] == 0.5
    seeded = keras.initializers.TruncatedNormal(stddev=0.5, seed=3)
    np.testing.assert_array_equal(clone_initializer(seeded)((4, 4)), seeded((4, 4)))
    assert isinstance(clone_initializer("glorot_uniform"), keras.initializers.GlorotUniform)


def test_no_two_weights_of_an_encoder_start_equal():
    encoder = Encoder.from_preset("tiny", embedding_dim=8)  # with the ALBERT projection too
    random_weights = [w for w in encoder.weights if len(w.shape) == 2 and np.std(np.asarray(w)) > 0]
    assert len(random_weights) >= 4 + 4 * 2 + 2 * 2 + 1
    for a, b in itertools.combinations(random_weights, 2):
        if a.shape == b.shape:
            assert not np.allclose(np.asarray(a), np.asarray(b)), (a.path, b.path)
