"""An argument parser whose options and positional arguments may come in any order.

`argparse` stops filling a `nargs="*"` positional at the first option: `kbert predict RUN
--long-inputs head_tail "some text"` left "some text" unrecognized. `parse_intermixed_args`
reads options first and positionals from what is left, in any order, but refuses a parser with
subcommands. `IntermixedArgumentParser` is the parser class of each subcommand
(`add_subparsers(parser_class=IntermixedArgumentParser)`), so every subcommand, present and
future, reads its own arguments intermixed while the top-level parser only picks the command.
"""

import argparse


class IntermixedArgumentParser(argparse.ArgumentParser):
    """An `ArgumentParser` whose `parse_known_args` reads options and positionals intermixed.

    `argparse` calls a subcommand's parser through `parse_known_args`; this one answers with
    `parse_known_intermixed_args`, which itself calls `parse_known_args` twice (options, then
    positionals): those inner calls are the ordinary ones.

    Example:
    >>> parser = IntermixedArgumentParser(prog="predict")
    >>> _ = parser.add_argument("run_dir")
    >>> _ = parser.add_argument("texts", nargs="*")
    >>> _ = parser.add_argument("--long-inputs")
    >>> args = parser.parse_args(["runs/x", "--long-inputs", "head_tail", "a", "b"])
    >>> args.texts, args.long_inputs
    (['a', 'b'], 'head_tail')
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._reading_intermixed = False

    def parse_known_args(self, args=None, namespace=None):
        if self._reading_intermixed:
            return super().parse_known_args(args, namespace)
        self._reading_intermixed = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._reading_intermixed = False
