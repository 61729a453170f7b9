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

package dev.idempotency.spring.webflux;

import java.util.List;
import java.util.Map;

import dev.idempotency.spring.http.FormCanonicalizer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.ResolvableType;
import org.springframework.core.codec.Hints;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.MediaType;
import org.springframework.http.codec.HttpMessageReader;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.codec.multipart.Part;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;

/**
 * The exchange that the handler of an admitted request sees: its body is the copy that
 * the filter read (the original can be read once only), and so are its form and multipart
 * data, which WebFlux would otherwise read from the original body. A form that a filter
 * before this one read (Spring Security's CSRF check does) is the exchange's, which keeps
 * what it parsed: the body is empty then, as it is to any reader after the first.
 *
 * @author Idempotency contributors
 */
final class BufferedExchange extends ServerWebExchangeDecorator {

	private static final ResolvableType MULTIPART_DATA = ResolvableType.forClassWithGenerics(MultiValueMap.class,
			String.class, Part.class);

	private final ServerHttpRequest request;

	private final ServerHttpResponse response;

	private final Mono<MultiValueMap<String, String>> formData;

	private final Mono<MultiValueMap<String, Part>> multipartData;

	BufferedExchange(ServerWebExchange delegate, byte[] body, ServerHttpResponse response,
			@Nullable ServerCodecConfigurer codecs, boolean formConsumed) {
		super(delegate);
		this.request = new ServerHttpRequestDecorator(delegate.getRequest()) {

			@Override
			public Flux<DataBuffer> getBody() {
				// a buffer of its own for each reader, over the same bytes
				return (body.length == 0) ? Flux.empty()
						: Flux.defer(() -> Flux.just(response.bufferFactory().wrap(body)));
			}

		};
		this.response = response;
		MediaType contentType = delegate.getRequest().getHeaders().getContentType();
		// a form read before the filter is the exchange's, which keeps it
		this.formData = formConsumed ? delegate.getFormData()
				: Mono.fromSupplier(() -> formData(contentType, body)).cache();
		this.multipartData = multipartData(contentType, codecs).cache();
	}

	private static MultiValueMap<String, String> formData(@Nullable MediaType contentType, byte[] body) {
		MultiValueMap<String, String> form = new LinkedMultiValueMap<>();
		if (contentType != null && MediaType.APPLICATION_FORM_URLENCODED.isCompatibleWith(contentType)) {
			Map<String, List<String>> parsed = FormCanonicalizer.parseLeniently(body,
					FormCanonicalizer.charset(contentType.getParameter("charset")));
			parsed.forEach(form::addAll);
		}
		return form;
	}

	@SuppressWarnings("unchecked")
	private Mono<MultiValueMap<String, Part>> multipartData(@Nullable MediaType contentType,
			@Nullable ServerCodecConfigurer codecs) {
		if (contentType == null || !MediaType.MULTIPART_FORM_DATA.isCompatibleWith(contentType) || codecs == null) {
			return Mono.fromSupplier(LinkedMultiValueMap::new);
		}
		for (HttpMessageReader<?> reader : codecs.getReaders()) {
			if (reader.canRead(MULTIPART_DATA, MediaType.MULTIPART_FORM_DATA)) {
				return ((HttpMessageReader<MultiValueMap<String, Part>>) reader)
					.readMono(MULTIPART_DATA, this.request, Hints.none())
					.switchIfEmpty(Mono.fromSupplier(LinkedMultiValueMap::new));
			}
		}
		return Mono.fromSupplier(LinkedMultiValueMap::new);
	}

	@Override
	public ServerHttpRequest getRequest() {
		return this.request;
	}

	@Override
	public ServerHttpResponse getResponse() {
		return this.response;
	}

	@Override
	public Mono<MultiValueMap<String, String>> getFormData() {
		return this.formData;
	}

	@Override
	public Mono<MultiValueMap<String, Part>> getMultipartData() {
		return this.multipartData;
	}

}
