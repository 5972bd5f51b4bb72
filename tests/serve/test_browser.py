"""The page of ``neuromath serve`` in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``,
driven through Selenium) opens the page of a server started as a user starts it, types a word problem, clicks solve
and must show the equation and answer that a run trained for the test gives, with its n-best list and attention
map. Skipped, with the reason, where Chromium or its driver is missing (``.ci/run`` installs them)."""

import random
import shutil

import httpx
import pytest

from neuromath.config import load_config
from neuromath.experiments.fit_then_test import train
from neuromath.serve.launch import serving
from neuromath.tasks import get_task

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver (see README)"),
]
JERRY = "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?"


@pytest.fixture(scope="module")
def subtraction_run(tmp_path_factory):
    """A tiny Transformer trained (60 steps, a few seconds) on generated problems whose equation is n0 - n1."""
    root = tmp_path_factory.mktemp("browser")
    task = get_task("word_problems")
    problems = [e for e in task.generate(3000, random.Random(0)) if e.equation == ("-", "n0", "n1")][:200]
    task.write(problems, root / "train.jsonl")
    config = load_config(None, [
        f"data.train={root / 'train.jsonl'}", "data.valid_fraction=0.1", "model.d_model=32", "model.n_heads=2",
        "model.d_ff=64", "model.n_encoder_layers=1", "model.n_decoder_layers=1", "train.max_steps=60",
        "train.max_epochs=-1", "train.patience=0", "train.progress=false", "train.batch_size=32",
        "optim.warmup_steps=20", "train.num_threads=1", "decode.beam=3", "decode.nbest=3",
    ])
    train(config, root / "subtraction")
    return root / "subtraction"


@pytest.fixture(scope="module")
def server(subtraction_run):
    with serving([subtraction_run]) as url:
        yield url


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1400",
                     f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_page_solves_a_typed_problem_in_chromium(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server)
    wait = WebDriverWait(browser, 60)
    wait.until(lambda page: page.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "ready")
    assert browser.find_element(By.ID, "run").get_attribute("value") == "subtraction"
    browser.find_element(By.ID, "text").send_keys(JERRY)
    assert browser.find_element(By.ID, "show-attention").is_selected()  # the attention map is asked for by default
    browser.find_element(By.ID, "solve").click()
    wait.until(lambda page: page.find_element(By.TAG_NAME, "body").get_attribute("data-state") in ("solved", "failed"))
    answer = browser.find_element(By.ID, "answer").text
    assert "135 - 19 = 116" in answer, answer
    assert not browser.find_element(By.ID, "error").text
    # the n-best list has the beam's three entries, the best first, as the API answers them
    rows = browser.find_elements(By.CSS_SELECTOR, "#nbest tbody tr")
    expected = httpx.post(f"{server}/api/solve", json={"run": "subtraction", "text": JERRY}, timeout=60).json()
    assert len(rows) == len(expected["nbest"]) == 3
    assert "135 - 19 = 116" in rows[0].text
    # the attention map is drawn: the canvas has a size and non-blank pixels
    assert browser.find_element(By.ID, "attention").is_displayed()
    painted = browser.execute_script(
        "const c = document.getElementById('attention-canvas');"
        "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        "let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250) n++;"
        "return [c.width, c.height, n];")
    assert painted[0] > 50 and painted[1] > 50 and painted[2] > 100, painted
    assert not [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    browser.save_screenshot(str(tmp_path / "page.png"))


def test_the_page_shows_the_servers_error_for_text_without_numbers(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server)
    wait = WebDriverWait(browser, 60)
    wait.until(lambda page: page.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "ready")
    browser.find_element(By.ID, "text").send_keys("How many pens are there?")
    browser.find_element(By.ID, "solve").click()
    wait.until(lambda page: page.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "failed")
    error = browser.find_element(By.ID, "error").text
    expected = httpx.post(f"{server}/api/solve", json={"run": "subtraction", "text": "How many pens are there?"},
                          timeout=60)
    assert expected.status_code == 422 and expected.json()["error"] in error


def test_the_page_labels_n_best_entries_that_are_not_well_formed(server, browser):
    """An n-best entry whose tokens form no equation (``well_formed`` false, ``equation`` null in the API's answer)
    is a greyed row saying so, with its tokens, not a blank line; well-formed entries show as before."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server)
    wait = WebDriverWait(browser, 60)
    wait.until(lambda page: page.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "ready")
    entry = {"score": -0.1, "verified": True, "verdict": None, "verdict_detail": None}
    answer = {"masked_equation": ["-", "n0", "n1"], "nbest": [
        {**entry, "tokens": ["-", "n0", "n1"], "equation": "135 - 19", "well_formed": True, "answer_text": "116"},
        {**entry, "tokens": ["-", "n0"], "equation": None, "well_formed": False, "answer_text": "",
         "verified": False},
        {**entry, "tokens": [], "equation": None, "well_formed": False, "answer_text": "", "verified": False}]}
    browser.execute_script("showNbest(arguments[0]);", answer)
    cells = browser.find_elements(By.CSS_SELECTOR, "#nbest tbody tr td.mono")
    assert [cell.text for cell in cells] == ["135 - 19 = 116", "(not a well-formed equation: - n0)",
                                            "(not a well-formed equation: no tokens)"]
    assert [cell.get_attribute("class") for cell in cells] == ["mono", "mono plain", "mono plain"]
    assert cells[1].value_of_css_property("color") != cells[0].value_of_css_property("color")  # greyed
