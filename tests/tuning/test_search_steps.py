"""tune's steps: the final step asks the search for its best configuration, which a search
that scored nothing refuses (a check, not an assert)."""

import pytest

from kernelmaps.tuning.search import _Search


def test_a_search_with_nothing_scored_has_no_best_model():
    search = _Search.__new__(_Search)
    search.best = None
    with pytest.raises(RuntimeError, match="scored no configuration"):
        search.best_scored()
