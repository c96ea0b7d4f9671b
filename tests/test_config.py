"""set_config / config_context: a misspelt setting names the closest one (issue 34)."""

from __future__ import annotations

import pytest

import kernelmaps as km


@pytest.mark.parametrize("call", [lambda: km.set_config(n_thread=2),
                                  lambda: km.config_context(n_thread=2).__enter__()],
                         ids=["set_config", "config_context"])
def test_a_misspelt_setting_names_the_closest(call):
    before = km.get_config()
    with pytest.raises(TypeError, match=r"'n_thread' \(did you mean 'n_threads'\?\)"):
        call()
    assert km.get_config() == before


def test_an_unknown_setting_lists_the_settings():
    with pytest.raises(TypeError, match=r"'colour'; the settings are \['block_bytes'"):
        km.set_config(colour=1)
