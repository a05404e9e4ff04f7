"""Calls of the signatures `kbert export` writes (`classify`, `tag`, `answer`, `embed`).

Each takes a `RestClient` or `GrpcClient` and lists of strings (input names `text`,
`text_pair`, `question`, `context`) and returns the signature's outputs as numpy arrays.
"""

import numpy as np

from kbert.serving.checks import ServingError, check_batch, check_rows


def _texts(values, name):
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, np.ndarray)):
        raise ValueError(f"{name} must be a list of strings, one per example; got {values!r:.200}")
    return list(values)


def _call(client, signature_name, inputs):
    if not callable(getattr(client, "predict", None)):
        raise ValueError(f"client must be a RestClient or GrpcClient; got {type(client).__name__}")
    outputs = client.predict(inputs, signature_name=signature_name)
    # The clients check this already; any other object with a `predict` is checked here.
    try:
        check_rows(outputs, check_batch(inputs))
    except ServingError as error:
        raise ServingError(f"signature {signature_name!r}: {error}") from None
    return outputs


def classify(client, texts, text_pairs=None):
    """Calls the `classify` signature of a `kbert export`ed classifier.

    Args:
        client: a `RestClient` or `GrpcClient`.
        texts: list of str, one text per example (input `text`).
        text_pairs: list of str or None (default), second segments for a pair classifier
            (input `text_pair`), as many as `texts`.

    Returns:
        The signature's outputs, a dict of output name -> numpy array.

    Raises:
        ValueError: `texts` or `text_pairs` is a bare string, or they differ in length.
        ServingError: the server failed the request, or an output does not hold one row per
            example sent.

    Example:

        classify(RestClient("localhost", "mrpc"), ["A man sleeps."], ["Someone sleeps."])
    """
    inputs = {"text": _texts(texts, "texts")}
    if text_pairs is not None:
        inputs["text_pair"] = _texts(text_pairs, "text_pairs")
    return _call(client, "classify", inputs)


def tag(client, texts):
    """Calls the `tag` signature of a `kbert export`ed tagger (input `text`).

    Args:
        client: a `RestClient` or `GrpcClient`.
        texts: list of str, one sentence per example.

    Returns:
        The signature's outputs, a dict of output name -> numpy array.

    Raises:
        ValueError: `texts` is a bare string.
        ServingError: the server failed the request, or an output does not hold one row per
            example sent.

    Example:

        tag(RestClient("localhost", "ner"), ["Ada Lovelace was born in London."])
    """
    return _call(client, "tag", {"text": _texts(texts, "texts")})


def answer(client, questions, contexts):
    """Calls the `answer` signature of a `kbert export`ed extractive QA model.

    Args:
        client: a `RestClient` or `GrpcClient`.
        questions: list of str (input `question`).
        contexts: list of str, the passage for each question (input `context`).

    Returns:
        The signature's outputs, a dict of output name -> numpy array.

    Raises:
        ValueError: a bare string instead of a list, or questions and contexts differ in length.
        ServingError: the server failed the request, or an output does not hold one row per
            example sent.

    Example:

        answer(RestClient("localhost", "squad"), ["Who wrote it?"], ["Ada wrote it."])
    """
    return _call(
        client,
        "answer",
        {"question": _texts(questions, "questions"), "context": _texts(contexts, "contexts")},
    )


def embed(client, texts):
    """Calls the `embed` signature that every `kbert export`ed model has (input `text`).

    Args:
        client: a `RestClient` or `GrpcClient`.
        texts: list of str, one text per example.

    Returns:
        The signature's outputs, a dict of output name -> numpy array.

    Raises:
        ValueError: `texts` is a bare string.
        ServingError: the server failed the request, or an output does not hold one row per
            example sent.

    Example:

        embed(GrpcClient("localhost", "minilm"), ["a sentence", "another one"])
    """
    return _call(client, "embed", {"text": _texts(texts, "texts")})
