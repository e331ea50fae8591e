"""How a POS config's [data] table becomes training sentences."""

import pytest

from training.pos.train import load_train


def _write_conll(path, n: int) -> None:
    """n one-token sentences: w0/NN, w1/NN, ..."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"w{i}\tNN\n\n" for i in range(n)))


@pytest.fixture
def root(tmp_path):
    _write_conll(tmp_path / "chat" / "train.conll", 10)
    _write_conll(tmp_path / "tweets" / "train.conll", 3)
    return tmp_path


def test_every_train_split_is_read_once_by_default(root):
    train = load_train({"train": {"chat/train": "ptb", "tweets/train": "ark"}}, root)
    assert len(train) == 10 + 3
    assert [s.head for s in train].count("ark") == 3


def test_repeat_puts_a_split_into_the_epoch_that_many_times(root):
    dc = {"train": {"chat/train": "ptb", "tweets/train": "ark"}, "repeat": {"tweets/train": 4}}
    train = load_train(dc, root)
    assert len(train) == 10 + 4 * 3
    assert sum(s.tokens == ["w0"] and s.head == "ark" for s in train) == 4


def test_repeat_of_a_split_that_is_not_trained_on_is_refused(root):
    with pytest.raises(SystemExit, match="not in train"):
        load_train({"train": {"chat/train": "ptb"}, "repeat": {"ritter/train": 4}}, root)
