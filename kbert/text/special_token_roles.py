"""Special-token roles ([PAD], [CLS], [SEP], [MASK]) for the Python subword tokenizers.

`WordPieceTokenizer` names the tokens that play BERT's roles (`pad_token`, `cls_token`, ...), and
the pretraining pipelines, maskers and packers read their ids from it. `BytePairTokenizer` and
`UnigramTokenizer` take the same four arguments through this mixin, so every pipeline accepts any
of the four tokenizers. A vocabulary trained or loaded without these tokens gets them with
`with_roles()`, which appends the missing ones as tokens that text never produces.
"""

ROLES = ("pad_token", "cls_token", "sep_token", "mask_token")


class RoleTokenIds:
    """The ids of the role tokens, for a tokenizer with `token_to_id` and the four role
    attributes (`pad_token`, ...; each a token of the vocabulary or None)."""

    def _role_id(self, token):
        return None if token is None else self.token_to_id(token)

    @property
    def pad_token_id(self):
        """int or None: the id of `pad_token`."""
        return self._role_id(self.pad_token)

    @property
    def cls_token_id(self):
        """int or None: the id of `cls_token`."""
        return self._role_id(self.cls_token)

    @property
    def sep_token_id(self):
        """int or None: the id of `sep_token`."""
        return self._role_id(self.sep_token)

    @property
    def mask_token_id(self):
        """int or None: the id of `mask_token`."""
        return self._role_id(self.mask_token)


class SpecialTokenRoles(RoleTokenIds):
    """Role tokens and their ids, for a tokenizer with `token_to_id`, `get_config`,
    `from_config` and `_config_with_special_tokens(tokens)` (its config with `tokens` appended
    to the vocabulary as tokens never produced from text)."""

    def _set_roles(self, **roles):
        for role, token in roles.items():
            if token is not None and (
                not isinstance(token, str) or self.token_to_id(token) is None
            ):
                raise ValueError(
                    f"{role} must be a token of the vocabulary or None; received {token!r} "
                    "(with_roles() adds missing role tokens to the vocabulary)"
                )
            setattr(self, role, token)

    def role_config(self):
        """The four role arguments, as `get_config` stores them."""
        return {role: getattr(self, role) for role in ROLES}

    @property
    def vocabulary_source(self):
        """str: how error messages name this vocabulary."""
        return f"{type(self).__name__} of {self.vocabulary_size()} tokens"

    def with_roles(
        self, pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]"
    ):
        """Returns a copy whose roles are these tokens, appending those not in the vocabulary.

        Existing ids do not change; appended tokens get ids from `vocabulary_size()` on and are
        never produced from text. Pass None for a role the tokenizer should not have.

        Args:
            pad_token, cls_token, sep_token, mask_token: str or None, defaults BERT's names.

        Returns:
            A tokenizer of the same class.
        """
        roles = {
            "pad_token": pad_token,
            "cls_token": cls_token,
            "sep_token": sep_token,
            "mask_token": mask_token,
        }
        for role, token in roles.items():
            if token is not None and (not isinstance(token, str) or not token):
                raise ValueError(f"{role} must be a non-empty str or None; received {token!r}")
        missing = [t for t in dict.fromkeys(roles.values()) if t and self.token_to_id(t) is None]
        config = self._config_with_special_tokens(missing)
        config.update(roles)
        return type(self).from_config(config)

    def tokenize_batch(self, texts, with_word_ids=False):
        """Token ids of each text, and optionally each token's word index within its text.

        Args:
            texts: list of str.
            with_word_ids: bool, default False.

        Returns:
            `(ids, word_ids)`: two lists (one per text) of lists of int; `word_ids` is None
            without `with_word_ids`.
        """
        if with_word_ids:
            rows = [self.tokenize_with_word_ids(text) for text in texts]
            return [r[0] for r in rows], [r[1] for r in rows]
        return [self.tokenize(text) for text in texts], None
