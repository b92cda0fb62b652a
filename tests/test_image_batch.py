"""Image transforms over a whole batch (data/image/batch.py) against the per-image transforms
under the same seed: bit for bit the same images, the same errors, and a pipeline with a step
that has no batch form left to the per-image path."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.data.image.batch import transform_batch
from autogradcli.data.transforms import (
    ColorJitter,
    Compose,
    Normalize,
    RandomCrop,
    RandomHorizontalFlip,
    RandomRotation,
)


def _images(n=9, c=3, h=7, w=5):
    return np.random.default_rng(0).random((n, c, h, w), dtype=np.float32)


def _both(transform, images):
    ag.manual_seed(11)
    one = [transform(img) for img in images]
    ag.manual_seed(11)
    batch = transform_batch(transform, images)
    return one, batch


@pytest.mark.parametrize(
    "steps",
    [
        [RandomCrop(padding=2), RandomHorizontalFlip(), RandomRotation(30, fill=0.5)],
        [RandomCrop((4, 3), padding=1, fill=0.25), Normalize([0.1, 0.2, 0.3], [0.5, 2.0, 1.5])],
        [RandomRotation((-90, 90)), RandomCrop((7, 5)), RandomHorizontalFlip(p=1.0)],
    ],
)
def test_batch_equals_one_by_one_bit_for_bit(steps):
    images = _images()
    one, batch = _both(Compose(steps), images)
    assert batch.dtype == np.float32 and batch.shape == (len(one), *one[0].shape)
    for a, b in zip(one, batch):
        np.testing.assert_array_equal(a, b)
    ag.manual_seed(11)
    again = transform_batch(Compose(steps), images)
    np.testing.assert_array_equal(batch, again)  # seeded: repeats


def test_crop_just_fits_and_one_too_big_is_the_same_error():
    images = _images(n=2, h=4, w=4)
    one, batch = _both(RandomCrop(6, padding=1), images)  # 6 = 4 + 2 * 1: just fits
    np.testing.assert_array_equal(np.stack(one), batch)
    with pytest.raises(ValueError) as per_image:
        RandomCrop(7, padding=1)(images[0])
    with pytest.raises(ValueError) as batched:
        transform_batch(RandomCrop(7, padding=1), images)
    assert str(batched.value) == str(per_image.value)


def test_step_without_batch_form_is_not_batched():
    assert transform_batch(Compose([RandomCrop(padding=1), ColorJitter(0.5)]), _images()) is None
    assert transform_batch(lambda img: img, _images()) is None
