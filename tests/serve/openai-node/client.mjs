// SPDX-License-Identifier: MIT
// The official OpenAI Node SDK against rbln-serve's /v1 API, as an
// application uses it: models, completions and chat completions, plain and
// streamed, cancellation, and the SDK's typed errors. Prints TAP.
//
//   node client.mjs BASE_URL MODEL METRICS_URL   (run from a directory with openai in node_modules)
import OpenAI from 'openai';

const [baseURL, model, metricsURL] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 120000 });
let n = 0;
let failed = 0;

function ok(cond, name, detail) {
	n++;
	if (!cond)
		failed++;
	console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${name}`);
	if (!cond && detail !== undefined)
		for (const line of String(typeof detail === 'string' ? detail : JSON.stringify(detail)).split('\n').slice(0, 20))
			console.log(`#   ${line}`);
}

async function check(name, fn) {
	try {
		await fn();
	} catch (e) {
		ok(false, name, `${e.constructor.name}: ${e.message}`);
	}
}

async function expectError(name, Kind, status, fn) {
	try {
		await fn();
		ok(false, name, 'no error');
	} catch (e) {
		ok(e instanceof Kind && e.status === status && typeof e.error?.message === 'string' &&
		   e.error.message.length > 0, name,
		   `${e.constructor.name} ${e.status}: ${JSON.stringify(e.error)}`);
	}
}

const prompt = 'def fibonacci(n):';
const messages = [{ role: 'user', content: 'Write a function that adds two numbers.' }];

await check('models.list', async () => {
	const list = await client.models.list();
	const ids = list.data.map((m) => m.id);
	ok(ids.includes(model) && list.data.every((m) => m.object === 'model'),
	   'models.list() names the served model', ids);
});

await check('models.retrieve', async () => {
	const m = await client.models.retrieve(model);
	ok(m.id === model && m.object === 'model', 'models.retrieve(id)', m);
});

let text = '';
await check('completions.create', async () => {
	const r = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0 });
	text = r.choices[0].text;
	ok(r.object === 'text_completion' && text.length > 0 && r.choices[0].finish_reason === 'length' &&
	   r.usage.completion_tokens === 16 && r.usage.prompt_tokens > 0,
	   'completions.create(): text, finish_reason length, usage', r);
});

await check('completions stream', async () => {
	const stream = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0,
							stream: true });
	let joined = '';
	let chunks = 0;
	let finish = null;
	for await (const c of stream) {
		chunks++;
		joined += c.choices[0]?.text ?? '';
		finish = c.choices[0]?.finish_reason ?? finish;
	}
	ok(chunks > 1 && joined === text && finish === 'length',
	   'completions stream: the chunks join to the same greedy text', { chunks, joined, text });
});

let reply = '';
await check('chat.completions.create', async () => {
	const r = await client.chat.completions.create({ model, messages, max_tokens: 24,
							 temperature: 0 });
	reply = r.choices[0].message.content;
	ok(r.object === 'chat.completion' && r.choices[0].message.role === 'assistant' &&
	   reply.length > 0 && ['length', 'stop'].includes(r.choices[0].finish_reason),
	   'chat.completions.create(): an assistant message', r);
});

await check('chat stream', async () => {
	const stream = await client.chat.completions.create({ model, messages, max_tokens: 24,
							      temperature: 0, stream: true });
	let joined = '';
	let role = null;
	for await (const c of stream) {
		role = c.choices[0]?.delta?.role ?? role;
		joined += c.choices[0]?.delta?.content ?? '';
	}
	ok(role === 'assistant' && joined === reply, 'chat stream: deltas join to the same reply',
	   { joined, reply });
});

await check('stop and seed', async () => {
	const r = await client.completions.create({ model, prompt, max_tokens: 32, temperature: 0,
						    stop: ['\n'] });
	ok(!r.choices[0].text.includes('\n') && r.choices[0].finish_reason === 'stop',
	   'a stop string ends the text (finish_reason stop)', r.choices[0]);
	const a = await client.completions.create({ model, prompt, max_tokens: 12, temperature: 0.9,
						    seed: 7 });
	const b = await client.completions.create({ model, prompt, max_tokens: 12, temperature: 0.9,
						    seed: 7 });
	ok(a.choices[0].text === b.choices[0].text, 'sampling with a seed repeats itself',
	   [a.choices[0].text, b.choices[0].text]);
});

await check('break', async () => {
	// Leaving the loop early aborts the request: the server must see the
	// client go and end the request (its KV blocks freed), as with any
	// disconnect.
	const stream = await client.completions.create({ model, prompt, max_tokens: 400,
							stream: true });
	let chunks = 0;
	for await (const c of stream) {
		if (++chunks === 2)
			break;
	}
	let running = -1;
	for (let i = 0; i < 50 && running !== 0; i++) {
		const m = await (await fetch(metricsURL)).text();
		const line = m.split('\n').find((l) => l.startsWith('vllm:num_requests_running'));
		running = line ? Number(line.split(' ').pop()) : -1;
		if (running !== 0)
			await new Promise((r) => setTimeout(r, 100));
	}
	ok(chunks === 2 && running === 0,
	   'breaking out of a stream after 2 chunks: the server runs nothing afterwards',
	   { chunks, running });
});

await expectError('an unknown model: NotFoundError 404', OpenAI.NotFoundError, 404,
		  () => client.completions.create({ model: 'no-such-model', prompt: 'x' }));
await expectError('max_tokens past max_model_len: BadRequestError 400', OpenAI.BadRequestError,
		  400, () => client.completions.create({ model, prompt, max_tokens: 1 << 20 }));
await expectError('temperature above 2: BadRequestError 400', OpenAI.BadRequestError, 400,
		  () => client.chat.completions.create({ model, messages, temperature: 2.5 }));
await expectError('messages of the wrong type: BadRequestError 400', OpenAI.BadRequestError,
		  400, () => client.chat.completions.create({ model, messages: 'hi' }));
await expectError('models.retrieve of an unknown model: NotFoundError 404',
		  OpenAI.NotFoundError, 404, () => client.models.retrieve('no-such-model'));

console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
