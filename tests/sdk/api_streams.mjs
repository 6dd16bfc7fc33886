// The official Anthropic and OpenAI SDKs read a server's Messages and Responses streams with their
// own accumulating helpers (messages.stream, responses.stream), then ask for a request the server
// refuses. Prints one JSON line per check: what the SDK made of the stream, or of the refusal.
//   node api_streams.mjs BASE_URL MODEL  (BASE_URL without /v1)
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

const [base, model] = process.argv.slice(2);
const anthropic = new Anthropic({ baseURL: base, apiKey: "sk-test", maxRetries: 0 });
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "sk-test", maxRetries: 0 });
const say = (o) => console.log(JSON.stringify(o));
const refusal = async (what, call) => {
    try {
        await call();
        say({ what, accepted: true });
    } catch (err) {
        say({ what, status: err.status, message: err.message });
    }
};

const message = await anthropic.messages
    .stream({
        model,
        max_tokens: 12,
        system: "be brief",
        messages: [{ role: "user", content: "one two three four five" }],
    })
    .finalMessage();
say({
    what: "messages",
    thinking: message.content.filter((b) => b.type === "thinking").map((b) => b.thinking).join(""),
    text: message.content.filter((b) => b.type === "text").map((b) => b.text).join(""),
    stop_reason: message.stop_reason,
    usage: message.usage,
});

const response = await openai.responses
    .stream({ model, instructions: "be brief", input: "one two three four five", max_output_tokens: 12 })
    .finalResponse();
say({
    what: "responses",
    reasoning: response.output
        .filter((i) => i.type === "reasoning")
        .flatMap((i) => i.content ?? [])
        .map((c) => c.text)
        .join(""),
    text: response.output
        .filter((i) => i.type === "message")
        .flatMap((i) => i.content)
        .map((c) => c.text)
        .join(""),
    status: response.status,
    usage: response.usage,
});

const long = "w ".repeat(60);
await refusal("messages 400", () =>
    anthropic.messages.create({
        model,
        max_tokens: 50,
        stream: true,
        messages: [{ role: "user", content: long }],
    }));
await refusal("responses 400", () =>
    openai.responses.create({ model, input: long, max_output_tokens: 50, stream: true }));
