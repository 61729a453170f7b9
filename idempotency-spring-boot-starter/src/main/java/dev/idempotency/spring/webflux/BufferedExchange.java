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
import org.springframework.util.CollectionUtils;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;

/**
 * The exchange that the handler of an admitted request sees: its body is the copy that
 * the filter read (the original can be read once only), and so are its form and multipart
 * data, which the application's readers parse from that copy as WebFlux would have parsed
 * them from the original body (a form in UTF-8 when its content type names no charset,
 * with the reader's errors). A form that a filter before this one read (Spring Security's
 * CSRF check does) is the exchange's, which keeps what it parsed: the body is empty then,
 * as it is to any reader after the first. A request that is neither a form nor multipart
 * has the exchange's own, empty, form and multipart data.
 *
 * @author Idempotency contributors
 */
final class BufferedExchange extends ServerWebExchangeDecorator {

	private static final ResolvableType FORM_DATA = ResolvableType.forClassWithGenerics(MultiValueMap.class,
			String.class, String.class);

	private static final ResolvableType MULTIPART_DATA = ResolvableType.forClassWithGenerics(MultiValueMap.class,
			String.class, Part.class);

	private static final Mono<MultiValueMap<String, String>> EMPTY_FORM_DATA = Mono
		.just(CollectionUtils.unmodifiableMultiValueMap(new LinkedMultiValueMap<String, String>(0)))
		.cache();

	private final ServerHttpRequest request;

	private final ServerHttpResponse response;

	private final Mono<MultiValueMap<String, String>> formData;

	private final Mono<MultiValueMap<String, Part>> multipartData;

	BufferedExchange(ServerWebExchange delegate, byte[] body, ServerHttpResponse response,
			HttpMessageReader<MultiValueMap<String, String>> formReader, @Nullable ServerCodecConfigurer codecs,
			boolean formConsumed) {
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
		if (contentType != null && contentType.isCompatibleWith(MediaType.APPLICATION_FORM_URLENCODED)) {
			// a form read before the filter is the exchange's, which keeps it
			this.formData = formConsumed ? delegate.getFormData()
					: formReader
						.readMono(FORM_DATA, this.request, Hints.from(Hints.LOG_PREFIX_HINT, delegate.getLogPrefix()))
						.switchIfEmpty(EMPTY_FORM_DATA)
						.cache();
			this.multipartData = delegate.getMultipartData();
		}
		else if (contentType != null && contentType.isCompatibleWith(MediaType.MULTIPART_FORM_DATA)) {
			this.formData = delegate.getFormData();
			this.multipartData = multipartData(codecs).cache();
		}
		else {
			// neither: the exchange's own, which never read the body for them
			this.formData = delegate.getFormData();
			this.multipartData = delegate.getMultipartData();
		}
	}

	@SuppressWarnings("unchecked")
	private Mono<MultiValueMap<String, Part>> multipartData(@Nullable ServerCodecConfigurer codecs) {
		if (codecs != null) {
			for (HttpMessageReader<?> reader : codecs.getReaders()) {
				if (reader.canRead(MULTIPART_DATA, MediaType.MULTIPART_FORM_DATA)) {
					return ((HttpMessageReader<MultiValueMap<String, Part>>) reader)
						.readMono(MULTIPART_DATA, this.request, Hints.none())
						.switchIfEmpty(Mono.fromSupplier(LinkedMultiValueMap::new));
				}
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
