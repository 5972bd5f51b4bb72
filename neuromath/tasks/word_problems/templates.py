"""Template-based synthetic English word problems with one to three arithmetic operations.

Each ``Template`` is a kind of problem (change, combine, compare, rate, unit price, sharing,
percent, multi-step) with several surface phrasings and one infix equation written over its
number slots. A problem is made by drawing a story (people, objects, vehicle, ...), drawing the
template's numbers (all different, chosen so that the answer is an exact, sensible number),
filling in one phrasing and the equation, and handing both to
``equations.example_from_equation`` so that generated problems are masked exactly like
real input.

Usage: ``generate(1000, random.Random(0), max_ops=2)``; ``TEMPLATES`` maps each template's name
to its ``Template`` (pass some of those names as ``templates=`` to restrict the choice).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from neuromath.errors import ConfigError
from neuromath.tasks.word_problems.equation_targets import example_from_equation
from neuromath.tasks.word_problems.records import Example

ARITHMETIC_OPERATORS = ("+", "-", "*", "/")
PERCENTAGES = (10, 20, 25, 50)
MAX_NUMBER_DRAWS = 1000


@dataclass(frozen=True)
class Person:
    name: str
    he: str
    him: str
    his: str
    himself: str


@dataclass(frozen=True)
class Item:
    """A countable object with the past-tense verb for getting more of it and a container for it."""

    singular: str
    plural: str
    gain_verb: str
    container: str
    containers: str


@dataclass(frozen=True)
class Vehicle:
    noun: str
    moves: str
    min_speed: int
    max_speed: int


@dataclass(frozen=True)
class Job:
    """Work done at a steady rate: ``does`` is the third person, ``do`` the base form."""

    does: str
    do: str
    products: str


MALE_NAMES = (
    "Jerry", "John", "Ahmed", "Wei", "Raj", "Carlos", "Kenji", "Kwame", "Ivan", "Liam",
    "Mateo", "Omar", "Hiroshi", "Tariq", "Diego", "Lars", "Arjun", "Jamal", "Pierre", "Tomasz",
    "Sipho", "Noah", "Mehmet", "Dmitri", "Kofi",
)
FEMALE_NAMES = (
    "Mary", "Aisha", "Mei", "Priya", "Sofia", "Fatima", "Yuki", "Amara", "Olga", "Chloe",
    "Lucia", "Ingrid", "Zainab", "Ana", "Hana", "Leila", "Emma", "Nadia", "Keiko", "Grace",
    "Ama", "Isabella", "Elif", "Svetlana", "Thandiwe",
)
PEOPLE = tuple(Person(name, "he", "him", "his", "himself") for name in MALE_NAMES) + tuple(
    Person(name, "she", "her", "her", "herself") for name in FEMALE_NAMES
)

ITEMS = (
    Item("pen", "pens", "bought", "box", "boxes"),
    Item("pencil", "pencils", "bought", "case", "cases"),
    Item("apple", "apples", "picked", "basket", "baskets"),
    Item("orange", "oranges", "picked", "crate", "crates"),
    Item("cookie", "cookies", "baked", "jar", "jars"),
    Item("cupcake", "cupcakes", "baked", "tray", "trays"),
    Item("muffin", "muffins", "baked", "tin", "tins"),
    Item("sticker", "stickers", "collected", "box", "boxes"),
    Item("marble", "marbles", "found", "bag", "bags"),
    Item("book", "books", "bought", "crate", "crates"),
    Item("balloon", "balloons", "blew up", "bag", "bags"),
    Item("stamp", "stamps", "collected", "album", "albums"),
    Item("crayon", "crayons", "bought", "box", "boxes"),
    Item("notebook", "notebooks", "bought", "bag", "bags"),
    Item("eraser", "erasers", "bought", "pack", "packs"),
    Item("candy", "candies", "bought", "bag", "bags"),
    Item("banana", "bananas", "bought", "bowl", "bowls"),
    Item("trading card", "trading cards", "collected", "pack", "packs"),
    Item("bead", "beads", "bought", "jar", "jars"),
    Item("button", "buttons", "found", "tin", "tins"),
    Item("seashell", "seashells", "collected", "bucket", "buckets"),
    Item("toy car", "toy cars", "bought", "box", "boxes"),
    Item("flower", "flowers", "picked", "vase", "vases"),
    Item("egg", "eggs", "collected", "carton", "cartons"),
    Item("potato", "potatoes", "dug up", "sack", "sacks"),
    Item("lemon", "lemons", "picked", "bowl", "bowls"),
    Item("peach", "peaches", "picked", "basket", "baskets"),
    Item("tomato", "tomatoes", "picked", "crate", "crates"),
    Item("sandwich", "sandwiches", "made", "tray", "trays"),
    Item("comic book", "comic books", "bought", "box", "boxes"),
    Item("postcard", "postcards", "bought", "packet", "packets"),
    Item("paper crane", "paper cranes", "folded", "box", "boxes"),
    Item("strawberry", "strawberries", "picked", "punnet", "punnets"),
    Item("carrot", "carrots", "pulled up", "basket", "baskets"),
)

VEHICLES = (
    Vehicle("train", "travels", 60, 150),
    Vehicle("car", "drives", 40, 100),
    Vehicle("bus", "travels", 30, 80),
    Vehicle("truck", "drives", 40, 90),
    Vehicle("cyclist", "rides", 10, 25),
    Vehicle("runner", "runs", 6, 15),
    Vehicle("boat", "sails", 8, 30),
    Vehicle("ship", "sails", 15, 40),
    Vehicle("plane", "flies", 300, 900),
    Vehicle("horse rider", "rides", 12, 35),
)

JOBS = (
    Job("types", "type", "pages"),
    Job("packs", "pack", "boxes"),
    Job("washes", "wash", "dishes"),
    Job("folds", "fold", "shirts"),
    Job("sorts", "sort", "letters"),
    Job("labels", "label", "jars"),
    Job("plants", "plant", "seedlings"),
    Job("stamps", "stamp", "envelopes"),
    Job("prints", "print", "posters"),
    Job("decorates", "decorate", "cakes"),
)

GOODS = (
    "bicycle", "jacket", "backpack", "lamp", "pair of shoes", "watch", "guitar", "tent",
    "printer", "camera", "coat", "desk chair",
)
CURRENCIES = ("dollars", "euros", "pounds")
DISTANCE_UNITS = ("kilometres", "miles")


@dataclass(frozen=True)
class Story:
    """The non-numeric choices of one problem."""

    person: Person
    other: Person
    item: Item
    other_item: Item
    vehicle: Vehicle
    job: Job
    goods: str
    currency: str
    distance_unit: str

    def slots(self) -> dict[str, str]:
        person, item = self.person, self.item
        return {
            "name": person.name,
            "he": person.he,
            "He": person.he.capitalize(),
            "him": person.him,
            "his": person.his,
            "himself": person.himself,
            "other": self.other.name,
            "obj": item.singular,
            "objs": item.plural,
            "verb": item.gain_verb,
            "container": item.container,
            "containers": item.containers,
            "objs2": self.other_item.plural,
            "vehicle": self.vehicle.noun,
            "moves": self.vehicle.moves,
            "does": self.job.does,
            "do": self.job.do,
            "products": self.job.products,
            "goods": self.goods,
            "currency": self.currency,
            "unit": self.distance_unit,
        }


def draw_story(rng: random.Random) -> Story:
    person, other = rng.sample(PEOPLE, 2)
    item, other_item = rng.sample(ITEMS, 2)
    return Story(
        person=person,
        other=other,
        item=item,
        other_item=other_item,
        vehicle=rng.choice(VEHICLES),
        job=rng.choice(JOBS),
        goods=rng.choice(GOODS),
        currency=rng.choice(CURRENCIES),
        distance_unit=rng.choice(DISTANCE_UNITS),
    )


NumberDrawer = Callable[[random.Random, Story], dict[str, int]]


@dataclass(frozen=True)
class Template:
    """One kind of problem.

    phrasings:    ``str.format`` patterns over the story slots (``Story.slots``) and the number
                  slots; a percentage slot is written ``{pct}%``.
    equation:     infix equation over the number slots, operators surrounded by spaces.
    draw_numbers: draws the number slots for a story; the generator redraws until all differ.
    """

    name: str
    category: str
    phrasings: tuple[str, ...]
    equation: str
    draw_numbers: NumberDrawer

    @property
    def operation_count(self) -> int:
        return sum(token in ARITHMETIC_OPERATORS for token in self.equation.split())

    def make_example(self, example_id: str, rng: random.Random) -> Example:
        story = draw_story(rng)
        numbers = self.draw_distinct_numbers(rng, story)
        text = rng.choice(self.phrasings).format(**story.slots(), **numbers)
        return example_from_equation(example_id, text, self.equation.format(**numbers))

    def draw_distinct_numbers(self, rng: random.Random, story: Story) -> dict[str, int]:
        """Numbers for one problem, redrawn until no value repeats (masking matches by value)."""
        for _ in range(MAX_NUMBER_DRAWS):
            numbers = self.draw_numbers(rng, story)
            if len(set(numbers.values())) == len(numbers):
                return numbers
        raise ConfigError(f"template {self.name!r}: could not draw {len(numbers)} different numbers")


# Number drawers. Every drawer returns positive integers chosen so that the equation's value is a
# non-negative whole number and no count in the text is 1 (``1 pens``).


def minuend_and_subtrahend(rng: random.Random, story: Story) -> dict[str, int]:
    a = rng.randint(20, 200)
    return {"a": a, "b": rng.randint(2, a - 2)}


def minuend_subtrahend_and_extra(rng: random.Random, story: Story) -> dict[str, int]:
    return {**minuend_and_subtrahend(rng, story), "extra": rng.randint(2, 60)}


def two_addends(rng: random.Random, story: Story) -> dict[str, int]:
    return {"a": rng.randint(2, 150), "b": rng.randint(2, 150)}


def two_addends_and_extra(rng: random.Random, story: Story) -> dict[str, int]:
    return {**two_addends(rng, story), "extra": rng.randint(2, 60)}


def three_addends(rng: random.Random, story: Story) -> dict[str, int]:
    return {"a": rng.randint(2, 90), "b": rng.randint(2, 90), "c": rng.randint(2, 90)}


def end_and_change(rng: random.Random, story: Story) -> dict[str, int]:
    return {"c": rng.randint(2, 150), "b": rng.randint(2, 100)}


def end_after_gain(rng: random.Random, story: Story) -> dict[str, int]:
    c = rng.randint(20, 200)
    return {"c": c, "b": rng.randint(2, c - 2)}


def start_and_larger_end(rng: random.Random, story: Story) -> dict[str, int]:
    a = rng.randint(2, 150)
    return {"a": a, "c": rng.randint(a + 2, a + 100)}


def total_and_part(rng: random.Random, story: Story) -> dict[str, int]:
    total = rng.randint(20, 200)
    return {"total": total, "a": rng.randint(2, total - 2)}


def count_and_factor(rng: random.Random, story: Story) -> dict[str, int]:
    return {"a": rng.randint(2, 50), "k": rng.randint(2, 9)}


def multiple_and_factor(rng: random.Random, story: Story) -> dict[str, int]:
    k = rng.randint(2, 9)
    return {"a": k * rng.randint(2, 30), "k": k}


def speed_and_hours(rng: random.Random, story: Story) -> dict[str, int]:
    vehicle = story.vehicle
    return {"speed": rng.randint(vehicle.min_speed, vehicle.max_speed), "hours": rng.randint(2, 9)}


def speed_hours_and_start_time(rng: random.Random, story: Story) -> dict[str, int]:
    return {**speed_and_hours(rng, story), "extra": rng.randint(2, 11)}


def distance_and_speed(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = speed_and_hours(rng, story)
    return {"distance": numbers["speed"] * numbers["hours"], "speed": numbers["speed"]}


def distance_and_hours(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = speed_and_hours(rng, story)
    return {"distance": numbers["speed"] * numbers["hours"], "hours": numbers["hours"]}


def two_legs(rng: random.Random, story: Story) -> dict[str, int]:
    first, second = speed_and_hours(rng, story), speed_and_hours(rng, story)
    return {"s1": first["speed"], "h1": first["hours"], "s2": second["speed"], "h2": second["hours"]}


def rate_and_hours(rng: random.Random, story: Story) -> dict[str, int]:
    return {"rate": rng.randint(2, 30), "hours": rng.randint(2, 12)}


def work_total_and_rate(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = rate_and_hours(rng, story)
    return {"total": numbers["rate"] * numbers["hours"], "rate": numbers["rate"]}


def work_total_and_hours(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = rate_and_hours(rng, story)
    return {"total": numbers["rate"] * numbers["hours"], "hours": numbers["hours"]}


def two_rates_and_hours(rng: random.Random, story: Story) -> dict[str, int]:
    return {"r1": rng.randint(2, 30), "r2": rng.randint(2, 30), "hours": rng.randint(2, 12)}


def price_and_quantity(rng: random.Random, story: Story) -> dict[str, int]:
    return {"price": rng.randint(2, 20), "quantity": rng.randint(2, 20)}


def price_quantity_and_wallet(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = price_and_quantity(rng, story)
    cost = numbers["price"] * numbers["quantity"]
    return {**numbers, "extra": rng.randint(cost + 1, cost + 100)}


def cost_and_quantity(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = price_and_quantity(rng, story)
    return {"cost": numbers["price"] * numbers["quantity"], "quantity": numbers["quantity"]}


def money_and_price(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = price_and_quantity(rng, story)
    return {"money": numbers["price"] * numbers["quantity"], "price": numbers["price"]}


def round_payment_above(cost: int, rng: random.Random) -> int:
    """A round amount (a multiple of 10) that covers ``cost``."""
    return 10 * (cost // 10 + rng.randint(1, 3))


def price_quantity_and_payment(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = price_and_quantity(rng, story)
    return {**numbers, "paid": round_payment_above(numbers["price"] * numbers["quantity"], rng)}


def two_prices_and_quantities(rng: random.Random, story: Story) -> dict[str, int]:
    first, second = price_and_quantity(rng, story), price_and_quantity(rng, story)
    return {"p1": first["price"], "q1": first["quantity"], "p2": second["price"], "q2": second["quantity"]}


def price_quantity_container_and_payment(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = price_and_quantity(rng, story)
    container_price = rng.randint(2, 30)
    cost = numbers["price"] * numbers["quantity"] + container_price
    return {**numbers, "container_price": container_price, "paid": round_payment_above(cost, rng)}


def total_and_people(rng: random.Random, story: Story) -> dict[str, int]:
    people = rng.randint(2, 12)
    return {"total": people * rng.randint(2, 25), "people": people}


def total_people_and_extra(rng: random.Random, story: Story) -> dict[str, int]:
    return {**total_and_people(rng, story), "extra": rng.randint(2, 60)}


def total_and_group_size(rng: random.Random, story: Story) -> dict[str, int]:
    size = rng.randint(2, 24)
    return {"total": size * rng.randint(2, 20), "size": size}


def groups_and_size(rng: random.Random, story: Story) -> dict[str, int]:
    return {"groups": rng.randint(2, 20), "size": rng.randint(2, 24)}


def total_kept_and_people(rng: random.Random, story: Story) -> dict[str, int]:
    people = rng.randint(2, 10)
    kept = rng.randint(2, 20)
    return {"total": kept + people * rng.randint(2, 20), "kept": kept, "people": people}


def total_and_friends_besides_self(rng: random.Random, story: Story) -> dict[str, int]:
    friends = rng.randint(2, 9)
    return {"total": (friends + 1) * rng.randint(2, 20), "friends": friends}


def whole_and_percentage(rng: random.Random, story: Story) -> dict[str, int]:
    # Multiples of 20 make 10%, 20%, 25% and 50% of them whole numbers.
    return {"whole": 20 * rng.randint(2, 25), "pct": rng.choice(PERCENTAGES)}


def gain_then_loss(rng: random.Random, story: Story) -> dict[str, int]:
    a, b = rng.randint(2, 120), rng.randint(2, 80)
    return {"a": a, "b": b, "c": rng.randint(2, a + b - 2)}


def loss_then_gain(rng: random.Random, story: Story) -> dict[str, int]:
    numbers = minuend_and_subtrahend(rng, story)
    return {**numbers, "c": rng.randint(2, 80)}


def packs_size_and_friends(rng: random.Random, story: Story) -> dict[str, int]:
    packs, size = rng.randint(2, 9), rng.randint(2, 12)
    divisors = [people for people in range(2, 13) if packs * size % people == 0]
    return {"packs": packs, "size": size, "people": rng.choice(divisors)}


def made_kept_and_price(rng: random.Random, story: Story) -> dict[str, int]:
    return {**minuend_and_subtrahend(rng, story), "price": rng.randint(2, 15)}


def savings_weeks_and_spending(rng: random.Random, story: Story) -> dict[str, int]:
    weekly, weeks = rng.randint(5, 50), rng.randint(2, 12)
    return {"weekly": weekly, "weeks": weeks, "spent": rng.randint(2, weekly * weeks - 1)}


def groups_size_and_loose(rng: random.Random, story: Story) -> dict[str, int]:
    groups, size = rng.randint(2, 12), rng.randint(3, 24)
    return {"groups": groups, "size": size, "loose": rng.randint(2, size - 1)}


def owned_packs_size_and_people(rng: random.Random, story: Story) -> dict[str, int]:
    people, share = rng.randint(2, 9), rng.randint(6, 30)
    total = people * share  # at least 12, so at least 2 are left over after 5 packs of 2
    packs = rng.randint(2, 5)
    size = rng.randint(2, (total - 2) // packs)
    return {"owned": total - packs * size, "packs": packs, "size": size, "people": people}


# The templates. Pronoun slots ({he}, {him}, {his}, {himself}, {He}) follow {name}'s gender.

TEMPLATE_LIST = (
    # --- change: a quantity gains or loses ---
    Template(
        "change_take_away",
        "change",
        (
            "{name} had {a} {objs}. {other} took {b} {objs} from {him}. How many {objs} does {name} have left?",
            "{name} had {a} {objs} and gave {b} of them to {other}. How many {objs} does {name} have now?",
            "There were {a} {objs} in {name}'s {container}. {He} took out {b} of them. "
            "How many {objs} are left in the {container}?",
        ),
        "{a} - {b}",
        minuend_and_subtrahend,
    ),
    Template(
        "change_take_away_with_distractor",
        "change",
        (
            "{name} had {a} {objs} and {extra} {objs2}. {He} lost {b} {objs} on the way home. "
            "How many {objs} does {name} have now?",
            "{name} bought {extra} {objs2} and already had {a} {objs}. {He} gave {b} {objs} to {other}. "
            "How many {objs} does {name} have left?",
        ),
        "{a} - {b}",
        minuend_subtrahend_and_extra,
    ),
    Template(
        "change_join",
        "change",
        (
            "{name} had {a} {objs}. {other} gave {him} {b} more {objs}. How many {objs} does {name} have now?",
            "{name} had {a} {objs}. Then {he} {verb} {b} more. How many {objs} does {name} have in all?",
            "There are {a} {objs} in a {container}. {name} puts {b} more {objs} into it. "
            "How many {objs} are in the {container} now?",
        ),
        "{a} + {b}",
        two_addends,
    ),
    Template(
        "change_start_unknown_after_loss",
        "change",
        (
            "{name} gave {b} {objs} to {other} and now has {c} {objs} left. How many {objs} did {name} have at first?",
            "After losing {b} {objs}, {name} has {c} {objs}. How many {objs} did {he} have before?",
        ),
        "{c} + {b}",
        end_and_change,
    ),
    Template(
        "change_start_unknown_after_gain",
        "change",
        (
            "{name} {verb} {b} more {objs} and now has {c} {objs}. How many {objs} did {name} have before?",
            "{other} gave {name} {b} {objs}. Now {name} has {c} {objs}. "
            "How many {objs} did {name} have to begin with?",
        ),
        "{c} - {b}",
        end_after_gain,
    ),
    Template(
        "change_amount_unknown",
        "change",
        (
            "{name} had {a} {objs}. After {other} gave {him} some more, {he} has {c} {objs}. "
            "How many {objs} did {other} give {name}?",
            "{name} had {a} {objs}. {He} {verb} some more and now has {c} {objs}. "
            "How many more {objs} does {he} have now?",
        ),
        "{c} - {a}",
        start_and_larger_end,
    ),
    # --- combine: parts and a whole ---
    Template(
        "combine_two",
        "combine",
        (
            "{name} has {a} {objs}. {other} has {b} {objs}. How many {objs} do they have altogether?",
            "{name} has {a} {objs} and {other} has {b} {objs}. How many {objs} do they have in total?",
            "There are {a} {objs} in one {container} and {b} {objs} in another. "
            "How many {objs} are there in both {containers}?",
        ),
        "{a} + {b}",
        two_addends,
    ),
    Template(
        "combine_two_with_distractor",
        "combine",
        (
            "{name} has {a} {objs} and {extra} {objs2}. {other} has {b} {objs}. "
            "How many {objs} do {name} and {other} have together?",
            "In the morning {name} {verb} {a} {objs}. In the afternoon {he} {verb} {b} more, "
            "while {other} {verb} {extra}. How many {objs} did {name} get that day?",
        ),
        "{a} + {b}",
        two_addends_and_extra,
    ),
    Template(
        "combine_three",
        "combine",
        (
            "{name} {verb} {a} {objs} on Monday, {b} on Tuesday and {c} on Wednesday. "
            "How many {objs} did {he} get over those days?",
            "There are {a} {objs} in the first {container}, {b} in the second and {c} in the third. "
            "How many {objs} are there in all?",
        ),
        "{a} + {b} + {c}",
        three_addends,
    ),
    Template(
        "combine_part_unknown",
        "combine",
        (
            "{name} and {other} have {total} {objs} together. {name} has {a} of them. "
            "How many {objs} does {other} have?",
            "A {container} holds {total} {objs}. {a} of them belong to {name} and the rest belong to {other}. "
            "How many {objs} belong to {other}?",
        ),
        "{total} - {a}",
        total_and_part,
    ),
    # --- compare: more / fewer than, times as many ---
    Template(
        "compare_more_than",
        "compare",
        (
            "{name} has {a} {objs}. {other} has {b} more {objs} than {name}. How many {objs} does {other} have?",
            "{other} has {b} more {objs} than {name}. {name} has {a} {objs}. How many {objs} does {other} have?",
        ),
        "{a} + {b}",
        two_addends,
    ),
    Template(
        "compare_fewer_than",
        "compare",
        (
            "{name} has {a} {objs}. {other} has {b} fewer {objs} than {name}. How many {objs} does {other} have?",
            "{other} has {b} fewer {objs} than {name}, who has {a}. How many {objs} does {other} have?",
        ),
        "{a} - {b}",
        minuend_and_subtrahend,
    ),
    Template(
        "compare_more_than_inverse",
        "compare",
        (
            "{other} has {a} {objs}. That is {b} more {objs} than {name} has. How many {objs} does {name} have?",
            "{other} has {b} more {objs} than {name}. If {other} has {a} {objs}, how many {objs} does {name} have?",
        ),
        "{a} - {b}",
        minuend_and_subtrahend,
    ),
    Template(
        "compare_difference",
        "compare",
        (
            "{name} has {a} {objs} and {other} has {b} {objs}. How many more {objs} does {name} have than {other}?",
            "{name} has {a} {objs} and {other} has {b} {objs}. How many fewer {objs} does {other} have than {name}?",
        ),
        "{a} - {b}",
        minuend_and_subtrahend,
    ),
    Template(
        "compare_times_as_many",
        "compare",
        (
            "{name} has {a} {objs}. {other} has {k} times as many {objs} as {name}. "
            "How many {objs} does {other} have?",
            "{other} has {k} times as many {objs} as {name}, who has {a}. How many {objs} does {other} have?",
        ),
        "{a} * {k}",
        count_and_factor,
    ),
    Template(
        "compare_times_as_many_inverse",
        "compare",
        (
            "{name} has {a} {objs}, which is {k} times as many as {other} has. How many {objs} does {other} have?",
            "{name} has {k} times as many {objs} as {other}. {name} has {a} {objs}. "
            "How many {objs} does {other} have?",
        ),
        "{a} / {k}",
        multiple_and_factor,
    ),
    Template(
        "compare_more_than_total",
        "compare",
        (
            "{name} has {a} {objs}. {other} has {b} more {objs} than {name}. "
            "How many {objs} do they have together?",
        ),
        "{a} + ({a} + {b})",
        two_addends,
    ),
    Template(
        "compare_times_as_many_total",
        "compare",
        (
            "{name} has {a} {objs}. {other} has {k} times as many {objs} as {name}. "
            "How many {objs} do they have altogether?",
        ),
        "{a} + {a} * {k}",
        count_and_factor,
    ),
    # --- rates: speed, time and distance; work ---
    Template(
        "rate_distance",
        "rate",
        (
            "A {vehicle} {moves} at {speed} {unit} per hour. "
            "How many {unit} does the {vehicle} cover in {hours} hours?",
            "Going at a steady {speed} {unit} an hour, how many {unit} does a {vehicle} travel in {hours} hours?",
        ),
        "{speed} * {hours}",
        speed_and_hours,
    ),
    Template(
        "rate_distance_with_distractor",
        "rate",
        (
            "A {vehicle} sets off at {extra} o'clock and {moves} at {speed} {unit} per hour for {hours} hours. "
            "How many {unit} does the {vehicle} cover?",
        ),
        "{speed} * {hours}",
        speed_hours_and_start_time,
    ),
    Template(
        "rate_travel_time",
        "rate",
        (
            "A {vehicle} {moves} {distance} {unit} at {speed} {unit} per hour. How many hours does the trip take?",
            "How many hours does a {vehicle} need to cover {distance} {unit} at {speed} {unit} per hour?",
        ),
        "{distance} / {speed}",
        distance_and_speed,
    ),
    Template(
        "rate_speed",
        "rate",
        (
            "A {vehicle} covers {distance} {unit} in {hours} hours at a steady speed. "
            "How many {unit} does the {vehicle} cover each hour?",
            "In {hours} hours a {vehicle} {moves} {distance} {unit}. What is the {vehicle}'s speed in {unit} per hour?",
        ),
        "{distance} / {hours}",
        distance_and_hours,
    ),
    Template(
        "rate_work_total",
        "rate",
        (
            "{name} can {do} {rate} {products} per hour. How many {products} can {he} {do} in {hours} hours?",
            "{name} {does} {rate} {products} every hour. How many {products} does {he} {do} in {hours} hours?",
        ),
        "{rate} * {hours}",
        rate_and_hours,
    ),
    Template(
        "rate_work_time",
        "rate",
        (
            "{name} {does} {rate} {products} per hour. How many hours will it take {him} to {do} {total} {products}?",
        ),
        "{total} / {rate}",
        work_total_and_rate,
    ),
    Template(
        "rate_work_rate",
        "rate",
        (
            "It takes {name} {hours} hours to {do} {total} {products}. How many {products} does {he} {do} per hour?",
            "{name} needs {hours} hours to {do} {total} {products}. "
            "How many {products} does {he} {do} in one hour?",
        ),
        "{total} / {hours}",
        work_total_and_hours,
    ),
    Template(
        "rate_work_together",
        "rate",
        (
            "{name} can {do} {r1} {products} per hour and {other} can {do} {r2} {products} per hour. "
            "How many {products} can they {do} together in {hours} hours?",
        ),
        "({r1} + {r2}) * {hours}",
        two_rates_and_hours,
    ),
    # --- unit price and total cost ---
    Template(
        "cost_total",
        "cost",
        (
            "{name} buys {quantity} {objs} at {price} {currency} each. How many {currency} does {he} pay?",
            "One {obj} costs {price} {currency}. How many {currency} do {quantity} {objs} cost?",
            "{name} bought {quantity} {objs}. Each {obj} cost {price} {currency}. "
            "How many {currency} did {name} spend?",
        ),
        "{price} * {quantity}",
        price_and_quantity,
    ),
    Template(
        "cost_total_with_distractor",
        "cost",
        (
            "{name} has {extra} {currency} in {his} wallet. {He} buys {quantity} {objs} at {price} {currency} each. "
            "How many {currency} does {he} spend?",
        ),
        "{price} * {quantity}",
        price_quantity_and_wallet,
    ),
    Template(
        "cost_unit_price",
        "cost",
        (
            "{quantity} {objs} cost {cost} {currency} in total. How many {currency} does one {obj} cost?",
            "{name} paid {cost} {currency} for {quantity} {objs}. What is the price of one {obj} in {currency}?",
        ),
        "{cost} / {quantity}",
        cost_and_quantity,
    ),
    Template(
        "cost_quantity_affordable",
        "cost",
        (
            "{name} has {money} {currency}. Each {obj} costs {price} {currency}. How many {objs} can {he} buy?",
            "How many {objs} at {price} {currency} each can {name} buy with {money} {currency}?",
        ),
        "{money} / {price}",
        money_and_price,
    ),
    Template(
        "cost_change_from_payment",
        "cost",
        (
            "{name} buys {quantity} {objs} at {price} {currency} each and pays with {paid} {currency}. "
            "How many {currency} of change does {he} get back?",
        ),
        "{paid} - {price} * {quantity}",
        price_quantity_and_payment,
    ),
    Template(
        "cost_two_items",
        "cost",
        (
            "{name} buys {q1} {objs} at {p1} {currency} each and {q2} {objs2} at {p2} {currency} each. "
            "How many {currency} does {he} spend in total?",
        ),
        "{p1} * {q1} + {p2} * {q2}",
        two_prices_and_quantities,
    ),
    # --- equal sharing and grouping ---
    Template(
        "share_equally",
        "sharing",
        (
            "{name} has {total} {objs} and shares them equally among {people} friends. "
            "How many {objs} does each friend get?",
            "{total} {objs} are shared equally among {people} children. How many {objs} does each child get?",
        ),
        "{total} / {people}",
        total_and_people,
    ),
    Template(
        "share_equally_with_distractor",
        "sharing",
        (
            "{name} has {total} {objs} and {extra} {objs2}. {He} shares the {objs} equally among {people} friends. "
            "How many {objs} does each friend get?",
        ),
        "{total} / {people}",
        total_people_and_extra,
    ),
    Template(
        "share_into_groups",
        "sharing",
        (
            "{name} puts {total} {objs} into {containers} of {size}. How many {containers} does {he} fill?",
            "{name} has {total} {objs}. {He} packs them {size} to a {container}. How many {containers} does {he} need?",
        ),
        "{total} / {size}",
        total_and_group_size,
    ),
    Template(
        "share_groups_total",
        "sharing",
        (
            "There are {groups} {containers} with {size} {objs} in each. How many {objs} are there in all?",
            "{name} has {groups} {containers} of {objs}. Each {container} holds {size} {objs}. "
            "How many {objs} does {name} have?",
        ),
        "{groups} * {size}",
        groups_and_size,
    ),
    Template(
        "share_after_keeping",
        "sharing",
        (
            "{name} has {total} {objs}. {He} keeps {kept} for {himself} and shares the rest equally among "
            "{people} friends. How many {objs} does each friend get?",
        ),
        "({total} - {kept}) / {people}",
        total_kept_and_people,
    ),
    Template(
        "share_including_self",
        "sharing",
        (
            "{name} and {friends} friends share {total} {objs} equally. How many {objs} does each of them get?",
            "{name} shares {total} {objs} equally between {himself} and {friends} friends. "
            "How many {objs} does each person get?",
        ),
        "{total} / ({friends} + 1)",
        total_and_friends_besides_self,
    ),
    # --- percent: of, remaining, discount, increase ---
    Template(
        "percent_of",
        "percent",
        (
            "{name} had {whole} {objs} and gave {pct}% of them to {other}. How many {objs} did {other} get?",
            "Of the {whole} {objs} in a shop, {pct}% were sold by noon. How many {objs} were sold by noon?",
        ),
        "{whole} * {pct}%",
        whole_and_percentage,
    ),
    Template(
        "percent_remaining",
        "percent",
        (
            "{name} had {whole} {objs} and gave away {pct}% of them. How many {objs} does {he} have left?",
        ),
        "{whole} - {whole} * {pct}%",
        whole_and_percentage,
    ),
    Template(
        "percent_discount_amount",
        "percent",
        (
            "A {goods} costs {whole} {currency}. It is on sale at {pct}% off. "
            "How many {currency} does {name} save by buying it on sale?",
        ),
        "{whole} * {pct}%",
        whole_and_percentage,
    ),
    Template(
        "percent_sale_price",
        "percent",
        (
            "A {goods} costs {whole} {currency}. The shop takes {pct}% off the price. "
            "What is the sale price in {currency}?",
            "{name} buys a {goods} that normally costs {whole} {currency} with a {pct}% discount. "
            "How many {currency} does {he} pay?",
        ),
        "{whole} - {whole} * {pct}%",
        whole_and_percentage,
    ),
    Template(
        "percent_increase",
        "percent",
        (
            "The price of a {goods} was {whole} {currency}. It went up by {pct}%. What is the new price in {currency}?",
            "A {goods} cost {whole} {currency} last year. This year it costs {pct}% more. "
            "How many {currency} does it cost this year?",
        ),
        "{whole} + {whole} * {pct}%",
        whole_and_percentage,
    ),
    # --- multi-step ---
    Template(
        "multi_gain_then_loss",
        "multi_step",
        (
            "{name} had {a} {objs}. {He} {verb} {b} more and then gave {c} to {other}. "
            "How many {objs} does {name} have now?",
        ),
        "{a} + {b} - {c}",
        gain_then_loss,
    ),
    Template(
        "multi_loss_then_gain",
        "multi_step",
        (
            "{name} had {a} {objs}. {other} took {b} of them, and then {name} {verb} {c} more. "
            "How many {objs} does {name} have now?",
        ),
        "{a} - {b} + {c}",
        loss_then_gain,
    ),
    Template(
        "multi_buy_and_share",
        "multi_step",
        (
            "{name} buys {packs} {containers} of {objs} with {size} {objs} in each and shares them equally among "
            "{people} friends. How many {objs} does each friend get?",
        ),
        "{packs} * {size} / {people}",
        packs_size_and_friends,
    ),
    Template(
        "multi_sell_the_rest",
        "multi_step",
        (
            "{name} had {a} {objs} and kept {b} of them. {He} sold the rest at {price} {currency} each. "
            "How many {currency} did {he} make?",
        ),
        "({a} - {b}) * {price}",
        made_kept_and_price,
    ),
    Template(
        "multi_savings",
        "multi_step",
        (
            "{name} saves {weekly} {currency} every week for {weeks} weeks. Then {he} spends {spent} {currency} "
            "on a {goods}. How many {currency} does {he} have left?",
        ),
        "{weekly} * {weeks} - {spent}",
        savings_weeks_and_spending,
    ),
    Template(
        "multi_full_and_loose",
        "multi_step",
        (
            "{name} has {groups} full {containers} of {objs} with {size} in each, plus {loose} loose {objs}. "
            "How many {objs} does {name} have in all?",
        ),
        "{groups} * {size} + {loose}",
        groups_size_and_loose,
    ),
    Template(
        "multi_two_leg_trip",
        "multi_step",
        (
            "A {vehicle} {moves} at {s1} {unit} per hour for {h1} hours and then at {s2} {unit} per hour "
            "for {h2} hours. How many {unit} does the {vehicle} cover altogether?",
        ),
        "{s1} * {h1} + {s2} * {h2}",
        two_legs,
    ),
    Template(
        "multi_change_after_shopping",
        "multi_step",
        (
            "{name} buys {quantity} {objs} at {price} {currency} each and a {container} for {container_price} "
            "{currency}. {He} pays with {paid} {currency}. How many {currency} of change does {he} get?",
        ),
        "{paid} - ({price} * {quantity} + {container_price})",
        price_quantity_container_and_payment,
    ),
    Template(
        "multi_combine_and_share",
        "multi_step",
        (
            "{name} has {owned} {objs} and buys {packs} {containers} with {size} {objs} in each. "
            "{He} shares all the {objs} equally among {people} friends. How many {objs} does each friend get?",
        ),
        "({owned} + {packs} * {size}) / {people}",
        owned_packs_size_and_people,
    ),
)

TEMPLATES: dict[str, Template] = {template.name: template for template in TEMPLATE_LIST}


def select_templates(names: Sequence[str] | None, min_ops: int, max_ops: int) -> list[Template]:
    """The templates named (all when ``names`` is None) whose operation count is in range."""
    if names is None:
        chosen = list(TEMPLATE_LIST)
    else:
        unknown = [name for name in names if name not in TEMPLATES]
        if unknown:
            raise ConfigError(f"unknown word-problem templates {unknown}; known: {', '.join(TEMPLATES)}")
        chosen = [TEMPLATES[name] for name in names]
    chosen = [template for template in chosen if min_ops <= template.operation_count <= max_ops]
    if not chosen:
        raise ConfigError(f"no word-problem template has between {min_ops} and {max_ops} operations")
    return chosen


def generate(
    n: int,
    rng: random.Random,
    *,
    min_ops: int = 1,
    max_ops: int = 3,
    templates: Sequence[str] | None = None,
) -> list[Example]:
    """``n`` synthetic problems with ids ``gen-000000``, ... from templates drawn uniformly.

    Deterministic for a given state of ``rng``; ``templates`` restricts the choice to those
    names in ``TEMPLATES``, ``min_ops``/``max_ops`` to templates with that many operations.
    """
    if n < 0:
        raise ConfigError(f"number of problems must be non-negative, got {n}")
    candidates = select_templates(templates, min_ops, max_ops)
    return [rng.choice(candidates).make_example(f"gen-{index:06d}", rng) for index in range(n)]
