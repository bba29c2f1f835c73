// OpenAI's Node library (`openai`, pinned in tests/clients) against `serve`: one scenario, run as
// `node node_openai.mjs SCENARIO BASE_URL CLIENTS_DIR`, printing what the library gave back as
// JSON for test_node_openai.py to check.
import { createRequire } from "node:module";
import { join } from "node:path";

const [scenario, baseURL, clients] = process.argv.slice(2);
const { default: OpenAI } = createRequire(join(clients, "package.json"))("openai");
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 60_000 });
const model = "gpt-oss-tiny";
const hi = [{ role: "user", content: "hi" }];

const scenarios = {
  // One completion: the message as the library parsed it.
  async chat() {
    const done = await client.chat.completions.create({ model, messages: hi });
    return { message: done.choices[0].message, finish_reason: done.choices[0].finish_reason };
  },

  // The raw chunks' deltas, and the stream helper's final message.
  async stream() {
    const chunks = [];
    for await (const chunk of await client.chat.completions.create({
      model, messages: hi, stream: true, stream_options: { include_usage: true },
    })) chunks.push(chunk);
    const helper = client.chat.completions.stream({ model, messages: hi });
    const final = await helper.finalChatCompletion();
    return { chunks, final: final.choices[0].message };
  },

  // `runTools`: the library calls get_weather and sends its output back.
  async tools() {
    const cities = [];
    const runner = client.chat.completions.runTools({
      model,
      messages: [{ role: "user", content: "What is the weather in Tokyo?" }],
      tools: [{
        type: "function",
        function: {
          name: "get_weather",
          description: "The weather in a city.",
          parameters: {
            type: "object",
            properties: { city: { type: "string", description: "The city's name." } },
            required: ["city"],
          },
          parse: JSON.parse,
          function: ({ city }) => { cities.push(city); return `sunny in ${city}`; },
        },
      }],
    });
    const answer = await runner.finalContent();
    return { answer, cities, messages: runner.messages };
  },

  // A JSON schema as the response format, parsed by the library.
  async schema() {
    const done = await client.chat.completions.parse({
      model,
      messages: [{ role: "user", content: "free: name a city and its population" }],
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "city",
          strict: true,
          schema: {
            type: "object",
            properties: { name: { type: "string" }, population: { type: "integer" } },
            required: ["name", "population"],
            additionalProperties: false,
          },
        },
      },
    });
    return { message: done.choices[0].message };
  },

  // The Responses API, whole and streamed: its output items and its events' types and deltas.
  async responses() {
    const whole = await client.responses.create({ model, input: "hi" });
    const events = [];
    for await (const event of await client.responses.create({ model, input: "hi", stream: true })) {
      events.push({ type: event.type, delta: event.delta });
    }
    return { output: whole.output, output_text: whole.output_text, events };
  },
};

process.stdout.write(JSON.stringify(await scenarios[scenario]()));
