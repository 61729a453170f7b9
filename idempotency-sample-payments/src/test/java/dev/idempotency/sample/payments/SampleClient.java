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

package dev.idempotency.sample.payments;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/**
 * Small HTTP client for the sample's tests: a real client on a real socket, so what the
 * tests see is exactly what a user's client sees.
 *
 * @author Idempotency contributors
 */
final class SampleClient {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final String baseUrl;

	SampleClient(int port) {
		this.baseUrl = "http://localhost:" + port;
	}

	HttpResponse<byte[]> post(String user, String path, String json, String... headers) {
		HttpRequest.Builder request = request(user, path, headers).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json));
		return send(request.build());
	}

	HttpResponse<byte[]> get(String user, String path, String... headers) {
		return send(request(user, path, headers).GET().build());
	}

	private HttpRequest.Builder request(String user, String path, String... headers) {
		String credentials = user + ":" + user + "-secret";
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(this.baseUrl + path))
			.timeout(Duration.ofSeconds(60))
			.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		if (headers.length > 0) {
			builder.headers(headers);
		}
		return builder;
	}

	private HttpResponse<byte[]> send(HttpRequest request) {
		try {
			return this.client.send(request, HttpResponse.BodyHandlers.ofByteArray());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static String text(HttpResponse<byte[]> response) {
		return new String(response.body(), StandardCharsets.UTF_8);
	}

}
