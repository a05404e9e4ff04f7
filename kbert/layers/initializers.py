"""Fresh copies of an initializer, so that no two weights start with the same values.

A Keras 3 random initializer draws its seed once, when it is created (`seed=None` included), and
every later call returns the same values for the same shape. One initializer object shared by the
query, key and value kernels of every block would start them all identical. Each weight therefore
gets `clone_initializer(...)`: an initializer of the same kind and settings with its own seed
(an explicit integer seed is kept, which makes a run reproducible, as the user asked).
"""

import keras


def clone_initializer(initializer):
    """Returns an initializer like `initializer` but with its own random draws.

    Args:
        initializer: a `keras.initializers.Initializer`, or anything
            `keras.initializers.get` accepts (a name, a config dict).

    Returns:
        A new `keras.initializers.Initializer`.

    Example:
    >>> import numpy as np
    >>> shared = keras.initializers.TruncatedNormal(stddev=0.02)
    >>> bool(np.allclose(shared((2, 2)), shared((2, 2))))  # one object: the same values
    True
    >>> bool(np.allclose(clone_initializer(shared)((2, 2)), clone_initializer(shared)((2, 2))))
    False
    """
    initializer = keras.initializers.get(initializer)
    return initializer.__class__.from_config(initializer.get_config())
