"""Text assets of an exported SavedModel (`vocab.txt`, `labels.txt`) and the tables read from them."""

import tensorflow as tf


def write_lines(path, lines, what):
    """Writes `lines` one per line; `what` names them in the error for a line break inside one."""
    for line in lines:
        if not isinstance(line, str) or "\n" in line or "\r" in line:
            raise ValueError(
                f"{what} must be str without line breaks to be written one per "
                f"line; received {line!r}"
            )
    with open(path, "w", encoding="utf-8") as file:
        file.write("".join(line + "\n" for line in lines))


def line_table(path, key_is_line_number):
    """A lookup table read from a text asset (which the SavedModel then carries)."""
    whole, number = tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER
    if key_is_line_number:
        initializer = tf.lookup.TextFileInitializer(path, tf.int64, number, tf.string, whole)
        return tf.lookup.StaticHashTable(initializer, default_value="")
    initializer = tf.lookup.TextFileInitializer(path, tf.string, whole, tf.int64, number)
    return tf.lookup.StaticHashTable(initializer, default_value=-1)
