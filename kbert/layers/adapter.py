"""Bottleneck adapters (Houlsby et al. 2019) and the wrapper that puts them on a sublayer."""

import keras

from kbert.layers.activations import get_activation


@keras.saving.register_keras_serializable(package="kbert")
class Adapter(keras.layers.Layer):
    """A bottleneck adapter: Dense down → activation → Dense up, plus a skip connection.

    `adapter(x) = x + up(activation(down(x)))` (with `residual=False`, only the second term:
    the form a parallel adapter adds beside a sublayer, He et al. 2021). The up-projection
    starts at zero, so a fresh adapter is the identity (or zero) and inserting it leaves a
    pretrained model's outputs unchanged.

    Args:
        bottleneck_dim: int, default 32. Width of the bottleneck.
        activation: str, default "gelu". See `kbert.layers.activations.get_activation`.
        residual: bool, default True. Add the input to the bottleneck's output.
        kernel_initializer: initializer of the down-projection, default
            TruncatedNormal(stddev=0.02).

    Example:
    >>> adapter = Adapter(bottleneck_dim=4)
    >>> x = keras.ops.ones((2, 3, 8))
    >>> bool(keras.ops.all(adapter(x) == x))
    True
    """

    def __init__(
        self, bottleneck_dim=32, activation="gelu", residual=True, kernel_initializer=None, **kwargs
    ):
        super().__init__(**kwargs)
        self.bottleneck_dim = bottleneck_dim
        self.activation = activation
        self.activation_fn = get_activation(activation)
        self.residual = residual
        self.kernel_initializer = keras.initializers.get(
            kernel_initializer or keras.initializers.TruncatedNormal(stddev=0.02)
        )
        self.down = keras.layers.Dense(
            bottleneck_dim,
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy,
            name="down",
        )
        self.up = None  # created in build(): its width is the input's

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        if self.bottleneck_dim >= hidden_dim:
            raise ValueError(
                f"an adapter's bottleneck_dim must be below the hidden size "
                f"{hidden_dim}; received bottleneck_dim={self.bottleneck_dim}"
            )
        self.down.build(input_shape)
        # Zero up-projection: the adapter starts as the identity (Houlsby et al. use a
        # near-zero init for the same reason).
        self.up = keras.layers.Dense(
            hidden_dim, kernel_initializer="zeros", dtype=self.dtype_policy, name="up"
        )
        self.up.build(tuple(input_shape[:-1]) + (self.bottleneck_dim,))
        self.built = True

    def call(self, inputs):
        delta = self.up(self.activation_fn(self.down(inputs)))  # (..., hidden_dim)
        return inputs + delta if self.residual else delta

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "bottleneck_dim": self.bottleneck_dim,
                "activation": self.activation,
                "residual": self.residual,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config


@keras.saving.register_keras_serializable(package="kbert")
class AdaptedSublayer(keras.layers.Layer):
    """Wraps a sublayer with named adapters, one of them active at a time.

    Serial (Houlsby, Pfeiffer): `adapter(sublayer(x))`. Parallel (He et al. 2021):
    `sublayer(x) + adapter(x)`, the adapter built with `residual=False`. Several task adapters
    can share one frozen base: `active_adapter` picks which one runs (None: the bare sublayer).
    The active name is read when the call is traced, so a compiled `fit`/`predict` function must
    be rebuilt after switching (eager calls see the change at once).

    The wrapper has the call signature of the sublayer it wraps (extra keyword arguments such as
    `training` go to the sublayer), so it can replace a `Dense` projection, which
    `kbert.layers.unpadding.apply_to_real_tokens` calls on `(tokens, width)` matrices, or a whole
    `FeedForward`.

    Args:
        sublayer: keras layer. The wrapped (frozen, usually) sublayer.
        adapters: dict of str → `Adapter`, or one `Adapter` (stored under "default").
        active_adapter: str or None, default the first name in `adapters`.
        parallel: bool, default False. Add the adapter's output beside the sublayer instead of
            applying it to the sublayer's output.

    Example:
    >>> wrapped = AdaptedSublayer(keras.layers.Dense(8), Adapter(bottleneck_dim=2))
    >>> tuple(wrapped(keras.ops.ones((2, 3, 8))).shape)
    (2, 3, 8)
    """

    def __init__(self, sublayer, adapters, active_adapter=None, parallel=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(sublayer, dict):
            sublayer = keras.saving.deserialize_keras_object(sublayer)
        if isinstance(adapters, keras.layers.Layer):
            adapters = {"default": adapters}
        adapters = {
            name: keras.saving.deserialize_keras_object(adapter)
            if isinstance(adapter, dict)
            else adapter
            for name, adapter in adapters.items()
        }
        if active_adapter is None and adapters:
            active_adapter = next(iter(adapters))
        self.sublayer = sublayer
        self.adapters = adapters  # tracked as a dict of layers
        self.parallel = parallel
        self.active_adapter = None
        self.set_active_adapter(active_adapter)

    def set_active_adapter(self, name):
        """Selects the adapter that runs (None: none)."""
        if name is not None and name not in self.adapters:
            raise ValueError(f"no adapter named {name!r}; this wrapper has {sorted(self.adapters)}")
        self.active_adapter = name

    def build(self, input_shape, *args, **kwargs):
        if not self.sublayer.built:
            self.sublayer.build(input_shape)
        output_shape = self.sublayer.compute_output_shape(input_shape)
        self._adapter_input_shape = tuple(input_shape if self.parallel else output_shape)
        for adapter in self.adapters.values():
            if not adapter.built:
                adapter.build(self._adapter_input_shape)
        self.built = True

    def call(self, inputs, **kwargs):
        outputs = self.sublayer(inputs, **kwargs)
        if self.active_adapter is None:
            return outputs
        adapter = self.adapters[self.active_adapter]
        if self.parallel:
            return outputs + adapter(inputs)
        return adapter(outputs)

    def compute_output_shape(self, input_shape, *args, **kwargs):
        return self.sublayer.compute_output_shape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "sublayer": keras.saving.serialize_keras_object(self.sublayer),
                "adapters": {
                    name: keras.saving.serialize_keras_object(adapter)
                    for name, adapter in self.adapters.items()
                },
                "active_adapter": self.active_adapter,
                "parallel": self.parallel,
            }
        )
        return config
