"""The TinyStories loader: range download, cache with manifest, clear errors offline."""
import http.server
import threading

import pytest

from course import data

TEXT = ("Once upon a time there was a cat.\n<|endoftext|>\n" * 200).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    honour_range = True
    requests_seen: list = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.requests_seen.append(self.headers.get("Range"))
        rng = self.headers.get("Range")
        if self.honour_range and rng:
            lo, hi = (int(v) for v in rng.split("=")[1].split("-"))
            body = TEXT[lo:hi + 1]
            self.send_response(206)
        else:
            body = TEXT
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(params=[True, False], ids=["honours-range", "ignores-range"])
def server(request):
    handler = type("H", (_Handler,), {"honour_range": request.param, "requests_seen": []})
    httpd = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/TinyStoriesV2-GPT4-valid.txt", handler
    httpd.shutdown()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(data.ENV_CACHE, str(tmp_path))
    monkeypatch.delenv(data.ENV_FILE, raising=False)
    return tmp_path


def test_download_takes_only_the_first_bytes(server, cache, monkeypatch):
    url, handler = server
    monkeypatch.setattr(data, "NBYTES", 1000)
    monkeypatch.setenv(data.ENV_URL, url)
    text = data.load_text(verbose=False)
    assert text.encode() == TEXT[:1000]
    assert handler.requests_seen == ["bytes=0-999"]
    assert data.check_cache(cache / data.CACHE_NAME) is None
    assert (cache / data.CACHE_NAME).stat().st_mode & 0o004      # readable by the grader's sandbox
    # the second time it comes from the cache: no new request
    assert data.load_text(verbose=False) == text
    assert len(handler.requests_seen) == 1


def test_offline_without_cache_says_what_to_do(cache, monkeypatch):
    monkeypatch.setenv(data.ENV_URL, "http://127.0.0.1:9/TinyStoriesV2-GPT4-valid.txt")
    with pytest.raises(data.StoriesUnavailable) as error:
        data.load_text(verbose=False)
    message = str(error.value)
    assert "TinyStoriesV2-GPT4-valid.txt" in message          # the URL
    assert str(cache / data.CACHE_NAME) in message             # where to put it
    assert data.ENV_FILE in message


@pytest.mark.parametrize("damage", ["truncate", "flip", "no-manifest"])
def test_corrupt_cache_is_detected_and_never_used(cache, monkeypatch, damage):
    path = data.save_to_cache(TEXT, "test", cache)
    if damage == "truncate":
        path.write_bytes(TEXT[:500])
    elif damage == "flip":
        path.write_bytes(TEXT.replace(b"cat", b"dog", 1))
    else:
        path.with_suffix(".json").unlink()
    assert data.check_cache(path) is not None
    monkeypatch.setenv(data.ENV_URL, "http://127.0.0.1:9/x.txt")
    with pytest.raises(data.StoriesUnavailable, match="unusable"):
        data.load_text(verbose=False)


def test_corrupt_cache_is_replaced_by_a_fresh_download(server, cache, monkeypatch):
    url, _ = server
    path = data.save_to_cache(TEXT, "test", cache)
    path.write_bytes(b"garbage")
    monkeypatch.setenv(data.ENV_URL, url)
    assert data.load_text(verbose=False).encode() == TEXT
    assert data.check_cache(path) is None


def test_environment_variable_names_a_file(tmp_path, monkeypatch):
    story = tmp_path / "mine.txt"
    story.write_text("the end .")
    monkeypatch.setenv(data.ENV_FILE, str(story))
    assert data.load_text() == "the end ."
    monkeypatch.setenv(data.ENV_FILE, str(tmp_path / "missing.txt"))
    with pytest.raises(data.StoriesUnavailable, match="no such file"):
        data.load_text()


def test_cache_write_is_atomic(cache, monkeypatch):
    def explode(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(data.os, "replace", explode)
    with pytest.raises(OSError):
        data.save_to_cache(TEXT, "test", cache)
    assert list(cache.iterdir()) == []          # no half-written file left behind
