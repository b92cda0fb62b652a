"""A small stand-in for the PyTorch tutorials' data/names/*.txt (no download): a few common
surnames per language, written as one ``[Language].txt`` file per language, one name a line."""

from __future__ import annotations

import os

NAMES = {
    "Italian": "Rossi Russo Ferrari Esposito Bianchi Romano Colombo Ricci Marino Greco Bruno Gallo "
    "Conti Costa Giordano Mancini Rizzo Lombardi Moretti Barbieri Fontana Santoro Mariani Rinaldi",
    "Japanese": "Sato Suzuki Takahashi Tanaka Watanabe Ito Yamamoto Nakamura Kobayashi Kato Yoshida "
    "Yamada Sasaki Yamaguchi Matsumoto Inoue Kimura Hayashi Shimizu Yamazaki Mori Abe Ikeda Hashimoto",
    "Russian": "Ivanov Smirnov Kuznetsov Popov Vasiliev Petrov Sokolov Mikhailov Novikov Fedorov "
    "Morozov Volkov Alekseev Lebedev Semenov Egorov Pavlov Kozlov Stepanov Nikolaev Orlov Andreev "
    "Makarov Zakharov",
}


def write_names(path: str = "data/names") -> None:
    os.makedirs(path, exist_ok=True)
    for language, names in NAMES.items():
        with open(os.path.join(path, f"{language}.txt"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(names.split()) + "\n")
