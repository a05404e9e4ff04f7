import numpy as np

from kbert.models import Perplexity


def test_perplexity_is_exp_of_the_token_weighted_mean_over_batches():
    metric = Perplexity()
    metric.update_state(np.array([1.0, 2.0, 9.0]), sample_weight=np.array([1.0, 1.0, 0.0]))
    metric.update_state(np.array([3.0]), sample_weight=np.array([1.0]))
    np.testing.assert_allclose(float(metric.result()), np.exp(2.0), rtol=1e-6)
    metric.reset_state()
    metric.update_state(np.array([0.0]))
    np.testing.assert_allclose(float(metric.result()), 1.0)
    assert Perplexity.from_config(Perplexity(name="mlm_perplexity").get_config()).name == (
        "mlm_perplexity"
    )
