// The outbound client for creator endpoints: address classification and the SSRF-guarded request.
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";

import {
  closeGuardedAgents,
  guardedRequest,
  OutboundError,
  type GuardedRequestOptions,
  type OutboundErrorCode,
} from "../src/net/guarded-http.js";
import { classifyAddress, isAllowedAddress, type AddressClass } from "../src/net/ip-policy.js";

const CLASSES: Record<Exclude<AddressClass, "invalid">, string[]> = {
  public: [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "2A00:1450:4001:80B::200E",
    "2606:4700:0000:0000:0000:0000:0000:1111",
    "::ffff:8.8.8.8",
    "::ffff:808:808",
    "64:ff9b::8.8.8.8",
    "64:ff9b:1::8.8.8.8",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, server 65.54.227.120, client 8.8.8.8
  ],
  loopback: [
    "127.0.0.1",
    "127.255.255.254",
    "::1",
    "0:0:0:0:0:0:0:1",
    "0000:0000:0000::0001",
    "::1%lo",
    "::ffff:127.0.0.1",
    "::FFFF:127.0.0.1",
    "::ffff:7f00:1",
    "0:0:0:0:0:ffff:7f00:0001",
    "::127.0.0.1",
    "::7f00:1",
    "::ffff:0:127.0.0.1",
    "::ffff:0:7f00:1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::7f00:1",
    "64:ff9b:1::127.0.0.1",
    "2002:7f00:1::",
    "2002:7f00:0001:abcd::1",
    "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
  ],
  private: [
    "10.0.0.1",
    "10.255.255.255",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "fc00::1",
    "fd12:3456::1",
    "FD00::ABCD",
    "::ffff:10.0.0.1",
    "::ffff:a00:1",
    "::10.0.0.1",
    "::ffff:0:10.0.0.1",
    "64:ff9b::10.0.0.1",
    "64:ff9b::a00:1",
    "2002:a00:1::1",
    "2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo, client 10.0.0.1
    "2001:0:a00:1::f7f7:f7f7", // Teredo, server 10.0.0.1, client 8.8.8.8
  ],
  link_local: ["169.254.0.1", "169.254.255.255", "fe80::1", "fe80::1%eth0", "FE80::abcd%2", "febf::1", "::ffff:169.254.1.1"],
  metadata: [
    "169.254.169.254",
    "169.254.170.2",
    "100.100.100.200",
    "fd00:ec2::254",
    "fd00:0ec2:0:0:0:0:0:254",
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "::169.254.169.254",
    "64:ff9b::a9fe:a9fe",
    "2002:a9fe:a9fe::",
    "2001:0:4136:e378:8000:63bf:5601:5601", // Teredo, client 169.254.169.254
    "::ffff:100.100.100.200",
  ],
  unspecified: ["0.0.0.0", "0.1.2.3", "::", "0:0:0:0:0:0:0:0", "::0", "::ffff:0.0.0.0", "::ffff:0:0", "64:ff9b::"],
  multicast: ["224.0.0.1", "239.255.255.250", "ff02::1", "FF05::1:3", "::ffff:224.0.0.251"],
  reserved: [
    "192.0.0.8",
    "192.88.99.1",
    "198.18.0.1",
    "198.19.255.255",
    "240.0.0.1",
    "255.255.255.255",
    "100::1",
    "100::ffff:7f00:1",
    "2001:2::1",
    "2001:1::1",
    "4000::1",
    "5f00::1",
    "fec0::1",
    "1:2:3:4:5:6:1.2.3.4",
    "64:ff9b:1:7f00:1::", // local-use NAT64 with the IPv4 address at an ambiguous offset
    "64:ff9b:2::8.8.8.8",
  ],
  documentation: ["192.0.2.1", "198.51.100.7", "203.0.113.255", "2001:db8::1", "2001:DB8:0:0:8:800:200C:417A", "3fff::1", "::ffff:192.0.2.1"],
  shared: ["100.64.0.1", "100.127.255.255", "::ffff:100.64.0.1", "64:ff9b::6440:1"],
};

const INVALID = [
  "",
  "localhost",
  "example.com",
  "1.2.3",
  "1.2.3.4.5",
  "256.0.0.1",
  "01.2.3.4",
  "127.1",
  "0x7f.0.0.1",
  "2130706433",
  " 127.0.0.1",
  "127.0.0.1 ",
  "127.0.0.1%eth0",
  "[::1]",
  "::ffff:127.0.0.1.",
  "::ffff:1.2.3",
  "::ffff:127.000.0.1",
  "::1.2.3.4:5",
  "1.2.3.4::",
  "1:2:3:4:5:6:7:8:9",
  "1:2:3:4:5:6:7",
  "1:2:3:4:5:6:7::8",
  "1:2:3:4:5:6:7:1.2.3.4",
  "1::2::3",
  ":::1",
  "::1:",
  ":1::",
  "1:",
  ":",
  "12345::1",
  "g::1",
  "fe80::1%",
  "::1%eth 0",
  "::1%%",
];

describe("classifyAddress", () => {
  for (const [cls, addresses] of Object.entries(CLASSES)) {
    it(`classifies ${cls} addresses in every spelling`, () => {
      for (const address of addresses) assert.equal(classifyAddress(address), cls, address);
    });
  }

  it("calls anything it cannot parse invalid", () => {
    for (const text of INVALID) assert.equal(classifyAddress(text), "invalid", JSON.stringify(text));
  });

  it("agrees with net.isIP on what is an address", () => {
    for (const text of [...Object.values(CLASSES).flat(), ...INVALID]) {
      assert.equal(classifyAddress(text) === "invalid", net.isIP(text) === 0, JSON.stringify(text));
    }
  });
});

describe("isAllowedAddress", () => {
  it("allows only public addresses under the public policy", () => {
    for (const [cls, addresses] of Object.entries(CLASSES)) {
      for (const address of addresses) assert.equal(isAllowedAddress(address, "public"), cls === "public", address);
    }
    for (const text of INVALID) assert.equal(isAllowedAddress(text, "public"), false, text);
  });

  it("adds loopback, and nothing else, under the development policy", () => {
    for (const [cls, addresses] of Object.entries(CLASSES)) {
      const allowed = cls === "public" || cls === "loopback";
      for (const address of addresses) assert.equal(isAllowedAddress(address, "development"), allowed, address);
    }
    for (const text of INVALID) assert.equal(isAllowedAddress(text, "development"), false, text);
  });
});

interface TestServer {
  server: http.Server;
  port: number;
  /** "METHOD /path" of every request received. */
  requests: string[];
  connections: () => number;
}

describe("guardedRequest", function () {
  this.timeout(15_000);
  const servers: http.Server[] = [];

  async function startServer(handler: http.RequestListener, host = "127.0.0.1"): Promise<TestServer> {
    const server = http.createServer();
    const requests: string[] = [];
    let connections = 0;
    server.on("connection", () => connections++);
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      requests.push(`${req.method} ${req.url}`);
      handler(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, host, resolve);
    });
    servers.push(server);
    return { server, port: (server.address() as AddressInfo).port, requests, connections: () => connections };
  }

  const hello: http.RequestListener = (_req, res) => {
    res.setHeader("x-test", "yes");
    res.end("hello");
  };

  const request = (url: string, overrides: Partial<GuardedRequestOptions> = {}) =>
    guardedRequest({ method: "GET", url, timeout_ms: 5_000, max_response_bytes: 1 << 20, policy: "development", ...overrides });

  async function outboundError(promise: Promise<unknown>, code: OutboundErrorCode): Promise<OutboundError> {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof OutboundError, `expected an OutboundError, got ${String(error)}`);
      assert.equal(error.code, code, error.message);
      return error;
    }
    assert.fail(`expected an OutboundError ${code}, got a response`);
  }

  afterEach(async () => {
    closeGuardedAgents();
    await Promise.all(
      servers.splice(0).map((server) => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(resolve));
      }),
    );
  });

  describe("refuses loopback under the public policy, in every spelling", () => {
    for (const host of ["127.0.0.1", "localhost", "0x7f.1", "2130706433", "127.1", "0.0.0.0", "[::ffff:127.0.0.1]"]) {
      it(`http://${host}:PORT`, async () => {
        const target = await startServer(hello);
        const error = await outboundError(request(`http://${host}:${target.port}/`, { policy: "public" }), "address_not_allowed");
        assert.match(error.message, /( \((loopback|unspecified)\))? is not allowed by the public endpoint policy$/);
        // Of a name, neither its address nor the class of it is told to whoever submitted the URL.
        if (host === "localhost") assert.equal(error.message, "localhost is not allowed by the public endpoint policy");
        assert.equal(target.connections(), 0);
        assert.deepEqual(target.requests, []);
        // The same server answers once loopback is allowed, so the refusal is what kept it quiet.
        if (!host.includes(":") && host !== "0.0.0.0") {
          assert.equal((await request(`http://${host}:${target.port}/`)).status, 200);
          assert.equal(target.connections(), 1);
        }
      });
    }

    it("http://[::1]:PORT", async function () {
      let target: TestServer;
      try {
        target = await startServer(hello, "::1");
      } catch {
        this.skip();
      }
      const error = await outboundError(request(`http://[::1]:${target.port}/`, { policy: "public" }), "address_not_allowed");
      assert.match(error.message, /^::1 \(loopback\) is not allowed/);
      assert.equal(target.connections(), 0);
      const response = await request(`http://[::1]:${target.port}/`);
      assert.equal(response.status, 200);
      assert.equal(response.remote_address, "::1");
    });
  });

  it("refuses private and metadata addresses even under the development policy", async () => {
    const started = Date.now();
    const metadata = await outboundError(request("http://169.254.169.254/latest/meta-data/"), "address_not_allowed");
    assert.match(metadata.message, /^169\.254\.169\.254 \(metadata\) is not allowed by the development endpoint policy$/);
    const privateError = await outboundError(request("http://[::ffff:a00:1]:8080/"), "address_not_allowed");
    assert.match(privateError.message, /^::ffff:a00:1 \(private\) is not allowed/);
    // Refused before any connection attempt, not after one timed out.
    assert.ok(Date.now() - started < 1_000);
  });

  it("calls a loopback server under the development policy", async () => {
    const target = await startServer((req, res) => {
      setTimeout(() => {
        res.setHeader("x-seen", `${req.headers.host} ${req.headers["accept-encoding"]} ${req.headers["x-custom"]}`);
        res.end("hello");
      }, 120);
    });
    const response = await request(`http://127.0.0.1:${target.port}/path?q=1#fragment`, { headers: { "X-Custom": "a" } });
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), "hello");
    assert.equal(response.remote_address, "127.0.0.1");
    assert.equal(response.headers["x-seen"], `127.0.0.1:${target.port} identity a`);
    assert.ok(response.elapsed_ms >= 100 && response.elapsed_ms < 3_000, `elapsed ${response.elapsed_ms}`);
    assert.deepEqual(target.requests, ["GET /path?q=1"]);
  });

  it("resolves host names under the development policy", async () => {
    const target = await startServer(hello);
    const response = await request(`http://localhost:${target.port}/`);
    assert.equal(response.body.toString(), "hello");
    assert.equal(response.remote_address, "127.0.0.1");
  });

  it("sends bodies with a content-length", async () => {
    const target = await startServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () =>
        res.end(JSON.stringify({ length: req.headers["content-length"], chunked: req.headers["transfer-encoding"] ?? null, body: Buffer.concat(chunks).toString() })),
      );
    });
    const url = `http://127.0.0.1:${target.port}/run`;
    const text = await request(url, { method: "POST", body: "héllo", headers: { "content-type": "text/plain" } });
    assert.deepEqual(JSON.parse(text.body.toString()), { length: "6", chunked: null, body: "héllo" });
    const bytes = await request(url, { method: "POST", body: new Uint8Array([0x61, 0x62, 0x63]) });
    assert.deepEqual(JSON.parse(bytes.body.toString()), { length: "3", chunked: null, body: "abc" });
    const empty = await request(url, { method: "POST" });
    assert.deepEqual(JSON.parse(empty.body.toString()), { length: "0", chunked: null, body: "" });
  });

  it("refuses headers it manages itself", async () => {
    for (const name of ["Host", "content-length", "Transfer-Encoding", "connection", "Accept-Encoding"]) {
      await assert.rejects(request("http://127.0.0.1:1/", { headers: { [name]: "x" } }), TypeError, name);
    }
  });

  it("returns a redirect instead of following it", async () => {
    const target = await startServer((req, res) => {
      if (req.url === "/start") {
        res.writeHead(302, { location: "/target" });
        res.end();
      } else {
        res.end("target");
      }
    });
    const response = await request(`http://127.0.0.1:${target.port}/start`);
    assert.equal(response.status, 302);
    assert.equal(response.headers.location, "/target");
    assert.deepEqual(target.requests, ["GET /start"]);
  });

  describe("deadline", () => {
    it("times out a server that never answers", async () => {
      const target = await startServer(() => {});
      const started = Date.now();
      const error = await outboundError(request(`http://127.0.0.1:${target.port}/`, { timeout_ms: 300 }), "timeout");
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 280 && elapsed < 2_000, `elapsed ${elapsed}`);
      assert.match(error.message, /within 300 ms \(timed out waiting for the response\)/);
      assert.deepEqual(target.requests, ["GET /"]);
    });

    it("covers the whole body, not just the headers", async () => {
      const target = await startServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        const trickle = setInterval(() => res.write("."), 50);
        res.on("close", () => clearInterval(trickle));
      });
      const started = Date.now();
      const error = await outboundError(request(`http://127.0.0.1:${target.port}/`, { timeout_ms: 400 }), "timeout");
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 380 && elapsed < 2_000, `elapsed ${elapsed}`);
      assert.match(error.message, /timed out reading the response body/);
    });
  });

  describe("response size", () => {
    it("accepts a body of exactly the limit", async () => {
      const target = await startServer((_req, res) => res.end(Buffer.alloc(1000, 1)));
      const response = await request(`http://127.0.0.1:${target.port}/`, { max_response_bytes: 1000 });
      assert.equal(response.body.length, 1000);
    });

    it("refuses a declared content-length over the limit", async () => {
      const target = await startServer((_req, res) => res.end(Buffer.alloc(1001, 1)));
      const error = await outboundError(request(`http://127.0.0.1:${target.port}/`, { max_response_bytes: 1000 }), "response_too_large");
      assert.match(error.message, /declares 1001 bytes; the limit is 1000 bytes/);
    });

    it("counts a chunked body while reading", async () => {
      const target = await startServer(async (_req, res) => {
        for (let i = 0; i < 10 && !res.destroyed; i++) {
          res.write(Buffer.alloc(300, 1));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        res.end();
      });
      const error = await outboundError(request(`http://127.0.0.1:${target.port}/`, { max_response_bytes: 1000 }), "response_too_large");
      assert.match(error.message, /more than 1000 bytes arrived/);
    });

    it("drops the connection as soon as the limit is passed", async () => {
      let serverSawClose!: () => void;
      const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
      const target = await startServer((_req, res) => {
        const flood = setInterval(() => res.write(Buffer.alloc(512, 1)), 5);
        res.on("close", () => {
          clearInterval(flood);
          serverSawClose();
        });
      });
      const started = Date.now();
      await outboundError(request(`http://127.0.0.1:${target.port}/`, { max_response_bytes: 2048, timeout_ms: 10_000 }), "response_too_large");
      await closed;
      assert.ok(Date.now() - started < 2_000);
    });
  });

  describe("connection failures", () => {
    it("reports a refused connection", async () => {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const { port } = server.address() as AddressInfo;
      await new Promise((resolve) => server.close(resolve));
      const error = await outboundError(request(`http://127.0.0.1:${port}/`), "connect_failed");
      assert.equal(error.message, "connection failed: ECONNREFUSED", "the code, without the address and port");
    });

    it("reports a connection closed before the response was complete", async () => {
      const target = await startServer((req, res) => {
        res.writeHead(200, { "content-length": "100" });
        res.write("partial");
        setTimeout(() => req.socket.destroy(), 20);
      });
      await outboundError(request(`http://127.0.0.1:${target.port}/`), "connect_failed");
    });

    it("answers a name that does not resolve as one that resolves to a refused address: not allowed, nothing more", async () => {
      const unknown = await outboundError(request("http://agent-market-test.invalid/", { timeout_ms: 10_000, policy: "public" }), "address_not_allowed");
      assert.equal(unknown.message, "agent-market-test.invalid is not allowed by the public endpoint policy");
      const loopback = await outboundError(request("http://localhost:9/", { timeout_ms: 10_000, policy: "public" }), "address_not_allowed");
      assert.equal(loopback.message, "localhost is not allowed by the public endpoint policy");
    });

    it("refuses URLs it will not call", async () => {
      const urls = [
        "ftp://example.com/file",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://user:secret@127.0.0.1:1/",
        "http://user@127.0.0.1:1/",
        "not a url",
        "",
        "/relative/path",
        "http://",
      ];
      for (const url of urls) {
        const error = await outboundError(request(url), "invalid_url");
        assert.doesNotMatch(error.message, /secret/);
      }
    });
  });

  it("reuses one connection for sequential requests", async () => {
    const target = await startServer(hello);
    const url = `http://127.0.0.1:${target.port}/`;
    for (let i = 0; i < 3; i++) assert.equal((await request(url)).body.toString(), "hello");
    assert.equal(target.requests.length, 3);
    assert.equal(target.connections(), 1);
  });

  it("does not reuse a connection whose response was cut short", async () => {
    const target = await startServer((req, res) => (req.url === "/big" ? res.end(Buffer.alloc(5000)) : res.end("ok")));
    await outboundError(request(`http://127.0.0.1:${target.port}/big`, { max_response_bytes: 100 }), "response_too_large");
    assert.equal((await request(`http://127.0.0.1:${target.port}/small`)).body.toString(), "ok");
    assert.equal(target.connections(), 2);
  });

  describe("abort signal", () => {
    it("aborts a request in flight", async () => {
      const target = await startServer(() => {});
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error("shutting down")), 100);
      const started = Date.now();
      const error = await outboundError(request(`http://127.0.0.1:${target.port}/`, { signal: controller.signal }), "aborted");
      assert.ok(Date.now() - started < 2_000);
      assert.equal((error.cause as Error).message, "shutting down");
      assert.deepEqual(target.requests, ["GET /"]);
    });

    it("does not connect when already aborted", async () => {
      const target = await startServer(hello);
      await outboundError(request(`http://127.0.0.1:${target.port}/`, { signal: AbortSignal.abort() }), "aborted");
      assert.equal(target.connections(), 0);
    });
  });
});
