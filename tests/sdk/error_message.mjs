// The official OpenAI SDK sends one chat request to BASE_URL (argv[2], ".../v1") that the server
// refuses, and prints what the SDK tells its user: `STATUS MESSAGE`.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.argv[2], apiKey: "sk-test", maxRetries: 0 });
try {
    await client.chat.completions.create({
        model: process.argv[3],
        messages: [{ role: "user", content: "w ".repeat(60) }],
        max_tokens: 50,
    });
    console.log("accepted");
} catch (err) {
    console.log(`${err.status} ${err.message}`);
}
