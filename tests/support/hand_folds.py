"""Hand-made cross-validation folds in the SVAMP repository's CSV layout (``fold<k>/train.csv``, ``dev.csv``), shared by
the tests of ``neuromath cv`` and ``neuromath compare``."""

HEADER = "Question,Numbers,Equation,Answer\n"
ADD = "{} has number0 apples . {} buys number1 more apples . How many apples now ?"
EAT = "{} has number0 apples . {} eats number1 apples . How many apples now ?"
BOX = "A box holds number0 pens . How many pens in number1 boxes ?"
SHARE = "Sue shares number0 pens among number1 friends . How many pens each ?"


def svamp_csv(rows):
    return HEADER + "".join(
        f'"{question}",{numbers},{equation},{answer}\n' for question, numbers, equation, answer in rows
    )


def make_fold(folder, train="a\n", dev="b\n"):
    folder.mkdir(parents=True)
    if train is not None:
        (folder / "train.csv").write_text(train)
    if dev is not None:
        (folder / "dev.csv").write_text(dev)


def write_jaccard_folds(folds_dir):
    """Two folds whose test problems the Jaccard baseline gets right, right, wrong (fold0) and right, wrong (fold1)."""
    make_fold(folds_dir / "fold0",
              train=svamp_csv([(ADD.format("Tom", "He"), "5 3", "+ number0 number1", 8),
                               (BOX, "6 7", "* number0 number1", 42)]),
              dev=svamp_csv([
                  (ADD.format("Ann", "She"), "2 4", "+ number1 number0", 6),  # nearest ADD: 2 + 4, right value
                  (BOX, "3 5", "* number0 number1", 15),  # nearest BOX: right
                  (EAT.format("Tom", "He"), "9 4", "- number0 number1", 5),  # nearest ADD: 9 + 4, wrong
              ]))
    make_fold(folds_dir / "fold1",
              train=svamp_csv([(EAT.format("Tom", "He"), "9 4", "- number0 number1", 5),
                               (SHARE, "12 4", "/ number0 number1", 3)]),
              dev=svamp_csv([(EAT.format("Ann", "She"), "8 3", "- number0 number1", 5),  # nearest EAT: right
                             (ADD.format("Tom", "He"), "5 3", "+ number0 number1", 8)]))  # nearest EAT: 5 - 3, wrong
