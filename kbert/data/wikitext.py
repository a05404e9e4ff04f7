"""Raw WikiText-2 and WikiText-103 (Merity et al. 2016), read as articles.

The raw files hold one paragraph per line, spaces around every token (` @-@ `, ` @,@ `, ` @.@ `
stand for the hyphen, comma and point inside numbers), a line holding a single space between
paragraphs, and headings written ` = Title = ` (the article's title, which starts an article),
` = = Section = = ` and ` = = = Subsection = = = `.
"""

import re
from pathlib import Path

from kbert.data.data_dir import locate

# variant: (folder under the data directory, folder inside the public zip)
VARIANTS = {
    "wikitext-2": ("wikitext2", "wikitext-2-raw"),
    "wikitext-103": ("wikitext103", "wikitext-103-raw"),
}
SPLITS = ("train", "valid", "test")
# The Salesforce release's S3 bucket now answers 403; its author's mirror serves the same zips.
_URLS = (
    "https://wikitext.smerity.com/{variant}-raw-v1.zip",
    "https://s3.amazonaws.com/research.metamind.io/wikitext/{variant}-raw-v1.zip",
)
# A title line: " = Title = ", whose text does not itself start with "=" (that is a section).
_TITLE = re.compile(r"^ = (?!=)(.*) = $")
# Any heading line: " = Title = ", " = = Section = = ", " = = = Subsection = = = ".
_HEADING = re.compile(r"^ (?:= )+[^=].* (?:= )+$")


def _with_neighbors(lines):
    """Yields (previous, line, next) for each line, "" beyond the ends, streaming."""
    previous, line = "", None
    for following in lines:
        following = following.rstrip("\r\n")
        if line is not None:
            yield previous, line, following
            previous = line
        line = following
    if line is not None:
        yield previous, line, ""


def _locate_split(variant, split, data_dir):
    local_folder, archive_folder = VARIANTS[variant]
    name = f"wiki.{split}.raw"
    errors = []
    for url in _URLS:
        try:
            path = locate(
                f"{local_folder}/{name}",
                url.format(variant=variant),
                data_dir,
                extract_member=f"{archive_folder}/{name}",
            )
        except ValueError as error:
            errors.append(str(error))
            continue
        if path.parent.name in (local_folder, archive_folder):
            return path
        # `locate` finds an archive member by file name anywhere in the download cache, and both
        # variants' archives hold wiki.valid.raw: look for the one under this variant's folder.
        for parent in path.parents[:3]:
            matches = sorted(parent.rglob(f"{archive_folder}/{name}"))
            if matches:
                return matches[0]
        errors.append(f"{url.format(variant=variant)} did not give {archive_folder}/{name}")
    raise ValueError(f"{variant} {split} is not available: " + "; ".join(dict.fromkeys(errors)))


def read_wikitext(split="valid", variant="wikitext-2", data_dir=None, keep_headings=True):
    """Reads raw WikiText as a list of articles, each a list of paragraphs.

    A document starts at every top-level ` = Title = ` line between two blank lines (a heading;
    a few formula lines of the text also look like ` = x = `). The local copy is
    `<data_dir>/wikitext2/wiki.<split>.raw` (`wikitext103/` for WikiText-103); otherwise the
    public `<variant>-raw-v1.zip` is downloaded (needs network; the course machines hold only
    WikiText-2 valid and test, so "train" always comes from the download).

    Args:
        split: str, default "valid". "train", "valid" or "test" (WikiText-2: 600, 60 and 60
            articles; WikiText-103: 28,475, 60 and 60).
        variant: str, default "wikitext-2". "wikitext-2" or "wikitext-103" (same valid and test
            articles, larger train).
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).
        keep_headings: bool, default True. Keep the title and section heading lines as
            paragraphs, verbatim but stripped ("= Homarus gammarus =", "= = Description = ="),
            so the documents hold every whitespace word of the file (what word-level perplexity
            on WikiText counts); False drops them and keeps running text only.

    Returns:
        list of documents, each a list of str paragraphs (stripped lines, blank lines dropped).
        Text before the first title (none in the released files) becomes a document of its own.

    Example:
    >>> articles = read_wikitext("valid")  # doctest: +SKIP
    >>> len(articles), articles[0][0]  # doctest: +SKIP
    (60, '= Homarus gammarus =')
    """
    if variant not in VARIANTS:
        raise ValueError(
            f"WikiText variant must be one of {sorted(VARIANTS)}; received {variant!r}"
        )
    if split not in SPLITS:
        raise ValueError(f"WikiText split must be one of {SPLITS}; received {split!r}")
    path = Path(_locate_split(variant, split, data_dir))
    documents = []
    current = []
    with open(path, encoding="utf-8", newline="\n") as file:
        for previous, line, following in _with_neighbors(file):
            # Headings stand between blank lines; formula lines in the text such as
            # " = 1 henry and capacitance C = " (test set, "Constant k filter") do not.
            is_heading = not previous.strip() and not following.strip() and _HEADING.match(line)
            if is_heading and _TITLE.match(line):
                if current:
                    documents.append(current)
                current = []
            if not line.strip() or (is_heading and not keep_headings):
                continue
            current.append(line.strip())
    if current:
        documents.append(current)
    if not documents:
        raise ValueError(f"{path} holds no text; expected WikiText articles")
    return documents
