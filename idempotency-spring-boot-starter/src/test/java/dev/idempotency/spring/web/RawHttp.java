/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.spring.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Minimal HTTP/1.1 client over a socket, for requests that ordinary clients refuse to
 * send (control characters, raw bytes in headers).
 *
 * @author Idempotency contributors
 */
final class RawHttp {

	private RawHttp() {
	}

	/**
	 * Send a request and read the whole response.
	 * @param port the server's port
	 * @param head the request line and headers, without the blank line; lines separated
	 * by CRLF
	 * @param body the body
	 * @return the response
	 * @throws IOException if the exchange fails
	 */
	static Response exchange(int port, byte[] head, byte[] body) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", port)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(head);
			out.write(("\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.write(body);
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] all = in.readAllBytes();
			int end = indexOf(all, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
			String headers = new String(all, 0, end, StandardCharsets.ISO_8859_1);
			int status = Integer.parseInt(headers.substring(9, 12));
			return new Response(status, headers, Arrays.copyOfRange(all, end + 4, all.length));
		}
	}

	private static int indexOf(byte[] data, byte[] pattern) {
		for (int i = 0; i + pattern.length <= data.length; i++) {
			if (Arrays.equals(data, i, i + pattern.length, pattern, 0, pattern.length)) {
				return i;
			}
		}
		throw new IllegalStateException("No end of headers in the response");
	}

	static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.ISO_8859_1);
	}

	static byte[] concat(byte[]... parts) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		for (byte[] part : parts) {
			out.writeBytes(part);
		}
		return out.toByteArray();
	}

	record Response(int status, String headers, byte[] body) {

		String text() {
			return new String(this.body, StandardCharsets.UTF_8);
		}

	}

}
