"""When the service is down, slow or odd, the bot still acks at once and answers with a short
apology and the service's status: never silence. The service is mocked with respx; Slack is
the fake, the bot's endpoint the real one."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import respx
from bot_support import (
    QUESTION_FITS,
    BotUnderTest,
    block_text,
    buttons,
    mention,
    message,
    new_ts,
    running_bot,
)

from bot.service_client import ServiceClient, ServiceError

SERVICE = "http://fitcheck-service.test"
ANSWERS = json.loads((Path(__file__).parent / "fixtures" / "bot_ask_answers.json").read_text())
FITS = ANSWERS["fits"]["response"]


@pytest.fixture(scope="module")
def router() -> respx.MockRouter:
    return respx.MockRouter(base_url=SERVICE, assert_all_called=False)


@pytest.fixture(scope="module")
def shared_bot(router: respx.MockRouter) -> Iterator[BotUnderTest]:
    with running_bot(SERVICE, httpx.MockTransport(router.async_handler),
                     FITCHECK_BOT_SERVICE_TIMEOUT_S=2) as running:
        yield running


@pytest.fixture
def service(router: respx.MockRouter) -> respx.MockRouter:
    """The module's mocked service, with no routes and no calls yet."""
    router.clear()
    router.reset()
    return router


@pytest.fixture
def bot(shared_bot: BotUnderTest, service: respx.MockRouter) -> BotUnderTest:
    shared_bot.wait_idle(0)
    shared_bot.slack.reset()
    return shared_bot


FAILURES = [
    (httpx.ReadTimeout("slow"), "timed out after 2 s"),
    (httpx.ConnectTimeout("slow"), "timed out after 2 s"),
    (httpx.ConnectError("refused"), "could not be reached"),
    (httpx.Response(503, headers={"Retry-After": "5"}, json={"title": "Service Unavailable"}),
     "HTTP 503 Service Unavailable, retry after 5 s"),
    (httpx.Response(500, text="oops"), "HTTP 500 Internal Server Error"),
    (httpx.Response(200, text="<html>not json</html>"), "an answer that is not JSON"),
    (httpx.Response(200, json={"intent": "train"}), "an answer without a reply"),
]


@pytest.mark.parametrize(("failure", "status"), FAILURES)
def test_a_failing_service_gets_an_apology_with_its_status(
        bot: BotUnderTest, service: respx.MockRouter, failure: object, status: str) -> None:
    service.post("/v1/ask").mock(side_effect=[failure])
    assert bot.event(mention(QUESTION_FITS)).status_code == 200
    post = bot.slack.wait_for("chat.postMessage")[0].args
    assert "Sorry, I can't answer right now" in post["text"] and status in post["text"]
    assert post["thread_ts"]  # still in the thread


def test_a_refused_question_is_explained(bot: BotUnderTest, service: respx.MockRouter) -> None:
    problem = {"title": "Unprocessable", "errors": [{"field": "text", "message": "too long"}]}
    service.post("/v1/ask").mock(return_value=httpx.Response(422, json=problem))
    bot.event(message("x" * 5000))
    post = bot.slack.wait_for("chat.postMessage")[0].args
    assert "couldn't read that (text: too long)" in post["text"]
    assert len(json.loads(service.calls[0].request.content)["text"]) == 4000


def test_the_slash_apology_goes_to_the_asker_only(bot: BotUnderTest, service: respx.MockRouter) -> None:
    service.post("/v1/ask").mock(return_value=httpx.Response(502))
    bot.command(QUESTION_FITS)
    posted = bot.slack.wait_for("response_url")[0].args
    assert posted["response_type"] == "ephemeral" and "HTTP 502" in posted["text"]


def test_a_button_when_the_service_is_down_keeps_the_answer(
        bot: BotUnderTest, service: respx.MockRouter) -> None:
    route = service.post("/v1/ask")
    route.mock(return_value=httpx.Response(200, json=FITS))
    bot.event(mention(QUESTION_FITS))
    post = bot.slack.wait_for("chat.postMessage")[0].args
    route.mock(side_effect=httpx.ReadTimeout("slow"))
    bot.press(buttons(post["blocks"])["fitcheck_next_double_seq"], new_ts())
    apology = bot.slack.wait_for("response_url")[0].args
    assert apology["response_type"] == "ephemeral" and "timed out" in apology["text"]
    assert not apology.get("replace_original")
    assert not bot.slack.calls_of("chat.update")


def test_an_unfurl_says_when_the_service_cannot_answer(
        bot: BotUnderTest, service: respx.MockRouter) -> None:
    service.get("/v1/estimate").mock(return_value=httpx.Response(503))
    link = "https://fitcheck.example.com/v1/estimate?model=llama-3-8b"
    bot.event({"type": "link_shared", "channel": "C1", "message_ts": new_ts(), "user": "U1",
               "links": [{"url": link, "domain": "fitcheck.example.com"}], "event_ts": new_ts()})
    card = bot.slack.wait_for("chat.unfurl")[0].args["unfurls"][link]["blocks"]
    assert "not answering right now (HTTP 503" in block_text(card)
    assert service.calls[0].request.url.query == b"model=llama-3-8b"


def test_the_ack_comes_before_a_slow_service_answers() -> None:
    service = respx.MockRouter(base_url=SERVICE, assert_all_called=False)
    called, release = threading.Event(), threading.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        called.set()
        while not release.is_set():
            await asyncio.sleep(0.005)
        return httpx.Response(200, json=FITS)

    service.post("/v1/ask").mock(side_effect=slow)
    with running_bot(SERVICE, httpx.MockTransport(service.async_handler)) as bot:
        for send in (lambda: bot.event(mention(QUESTION_FITS)), lambda: bot.command(QUESTION_FITS)):
            assert send().status_code == 200  # acked while the service still holds the answer
        assert called.wait(5) and not release.is_set()
        assert not bot.slack.calls_of("chat.postMessage") and not bot.slack.calls_of("response_url")
        release.set()
        bot.slack.wait_for("chat.postMessage")
        bot.slack.wait_for("response_url")


def test_the_client_sends_the_question_and_maps_errors() -> None:
    asyncio.run(_client_round_trip())


async def _client_round_trip() -> None:
    with respx.mock(base_url=SERVICE, assert_all_called=True) as router:
        ask = router.post("/v1/ask").mock(return_value=httpx.Response(200, json=FITS))
        client = ServiceClient(SERVICE, timeout_s=1.5)
        result = await client.ask("hi", {"model": "llama-3-8b"}, request_id="Ev1")
        sent = ask.calls[0].request
        assert json.loads(sent.content) == {"text": "hi", "previous": {"model": "llama-3-8b"}}
        assert sent.headers["X-Request-ID"] == "Ev1"
        assert result.intent == "train" and result.parsed == FITS["parsed"]
        router.get("/v1/estimate").mock(return_value=httpx.Response(404, json={"detail": "no such model"}))
        with pytest.raises(ServiceError) as error:
            await client.permalink("model=nope")
        assert error.value.kind == "rejected" and error.value.status == "no such model"
        await client.close()
