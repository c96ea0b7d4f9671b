"""BLAS's thread count set from any thread (kernelmaps._engine._blas)."""

import threading

from threadpoolctl import threadpool_info, threadpool_limits

from kernelmaps._engine import blas_threads, single_threaded_blas


def _blas_threads() -> set[int]:
    return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}


def _on_a_thread(fn):
    seen: dict[str, object] = {}

    def work():
        try:
            seen["value"] = fn()
        except BaseException as error:  # re-raised below
            seen["error"] = error

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    if "error" in seen:
        raise seen["error"]
    return seen["value"]


def test_a_limit_set_from_another_thread_takes_effect_and_is_given_back():
    # compare's exact baseline: the calling thread holds a one-thread scope while the
    # baseline, on a thread beside the worker processes, asks for two. threadpoolctl's own
    # limit from that thread is ignored (the baseline factorised on one thread).
    with threadpool_limits(limits=1, user_api="blas"):
        def inside():
            with blas_threads(2):
                during = _blas_threads()
                with single_threaded_blas():  # a nested one-thread scope, then back to 2
                    pinned = _blas_threads()
                return during, pinned, _blas_threads()

        during, pinned, after_nested = _on_a_thread(inside)
        assert during == {2}
        assert pinned == {1}
        assert after_nested == {2}
        assert _blas_threads() == {1}  # the count there was before, restored
        with threadpool_limits(limits=1, user_api="blas"):  # the caller controls it again
            assert _blas_threads() == {1}
