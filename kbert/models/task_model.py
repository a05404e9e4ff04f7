"""What every task head built on a shared encoder has in common."""

import keras


def num_classes_of(model):
    """The model's class count: its `num_classes`, else its output's last dimension, else None."""
    num_classes = getattr(model, "num_classes", None)
    if num_classes is not None:
        return num_classes
    try:
        return model.outputs[0].shape[-1]
    except (AttributeError, IndexError, TypeError, ValueError):
        return None


class TaskModel(keras.Model):
    """Base of kbert's task models: a functional model calling a shared `encoder`.

    Subclasses build their graph on fresh `keras.Input`s, call `super().__init__(inputs=...,
    outputs=...)`, store `self.encoder` and their own arguments, and list those arguments in
    `_config()`; this base serializes the encoder with them and rebuilds it on load.
    """

    def head_layers(self):
        """The layers after the encoder (for freezing the encoder and training the head)."""
        return [
            layer
            for layer in self.layers
            if layer is not self.encoder and not isinstance(layer, keras.layers.InputLayer)
        ]

    def _config(self):
        """The subclass's own constructor arguments (besides `encoder`, `name`, `trainable`)."""
        raise NotImplementedError

    def get_config(self):
        return {
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            **self._config(),
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config["encoder"], dict):
            config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)
