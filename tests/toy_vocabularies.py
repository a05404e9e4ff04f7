"""Toy WordPiece vocabularies the contextual-embedding and feature tests share.

Each starts with BERT's five special tokens, so ids 0-4 are [PAD], [UNK], [CLS], [SEP], [MASK];
the words after them are the ones the tests' sentences use ("the river bank", "money flows",
"what is the river bank ?").
"""

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BANK_WORDS = ["the", "river", "bank", "##s", "money", "flows", "on", "a"]
QUESTION_WORDS = ["what", "is", "the", "river", "bank", "who", "wrote", "it"]

# "The river bank", "money flows": the words a sense of "bank" is read from.
BANK_VOCABULARY = SPECIAL_TOKENS + BANK_WORDS
# Short questions about the bank, read as features.
QUESTION_VOCABULARY = SPECIAL_TOKENS + QUESTION_WORDS
