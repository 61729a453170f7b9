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

import java.util.Arrays;
import java.util.List;

import dev.idempotency.spring.http.HttpContract;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

/**
 * The response of a handler whose request owns its key: its body is kept, copied out of
 * the handler's buffers (which are released at once), until the response is stored, and
 * only then {@link #commit(String) written}. A body larger than the policy's limit is not
 * kept: from the buffer that crosses the limit on, what was kept and the rest go to the
 * client as the handler writes them, and only the status and headers can be stored.
 * <p>
 * A body that fails partway leaves nothing kept: the answer that the application's
 * exception handling then writes replaces it, as a servlet response's buffer is reset
 * before an error is rendered, so the part written before the failure is neither sent nor
 * stored. A body that fails after part of it went to the client cannot be taken back: the
 * response is {@link #isBroken() broken}, and nothing of it may be stored. The body
 * written to the client always declares its own length.
 * <p>
 * Used by one request; its state is handed from the handler's signals to the store
 * scheduler by the reactive pipeline that orders them.
 *
 * @author Idempotency contributors
 */
final class CapturingResponse extends ServerHttpResponseDecorator {

	private static final byte[] EMPTY = new byte[0];

	private final int limit;

	private final Runnable beforeStreaming;

	private byte[] kept = EMPTY;

	private int size;

	private boolean streaming;

	private boolean bodyWritten;

	private boolean broken;

	/**
	 * Create a capture.
	 * @param delegate the real response
	 * @param limit the largest body kept, in bytes
	 * @param beforeStreaming called once, before a body over the limit begins to go out
	 */
	CapturingResponse(ServerHttpResponse delegate, int limit, Runnable beforeStreaming) {
		super(delegate);
		this.limit = limit;
		this.beforeStreaming = beforeStreaming;
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		this.bodyWritten = true;
		return Flux.from(body)
			.concatMapIterable(this::accept)
			// nothing to send yet unless the body crossed the limit
			.switchOnFirst((first, rest) -> first.hasValue() ? getDelegate().writeWith(rest) : rest.then())
			.then()
			.doOnError((ex) -> failed());
	}

	// the body failed partway: what was kept is no answer
	private void failed() {
		if (this.streaming) {
			this.broken = true;
			return;
		}
		this.kept = EMPTY;
		this.size = 0;
		this.bodyWritten = false;
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		return writeWith(Flux.from(body).concatMap(Flux::from));
	}

	@Override
	public Mono<Void> setComplete() {
		// committed by commit(), once the response is stored
		return this.streaming ? getDelegate().setComplete() : Mono.empty();
	}

	// the buffers to send now: none while the body is kept
	private List<DataBuffer> accept(DataBuffer buffer) {
		if (this.streaming) {
			return List.of(buffer);
		}
		int readable = buffer.readableByteCount();
		if ((long) this.size + readable <= this.limit) {
			try {
				if (this.size + readable > this.kept.length) {
					this.kept = Arrays.copyOf(this.kept, Math.max(this.size + readable, this.kept.length * 2));
				}
				buffer.read(this.kept, this.size, readable);
				this.size += readable;
			}
			finally {
				DataBufferUtils.release(buffer);
			}
			return List.of();
		}
		this.streaming = true;
		this.beforeStreaming.run();
		byte[] head = Arrays.copyOf(this.kept, this.size);
		this.kept = EMPTY;
		this.size = 0;
		return (head.length > 0) ? List.of(bufferFactory().wrap(head), buffer) : List.of(buffer);
	}

	/**
	 * Return the response's status, {@code 200} if the handler set none.
	 * @return the status
	 */
	int status() {
		HttpStatusCode status = getStatusCode();
		return (status != null) ? status.value() : 200;
	}

	/**
	 * Return whether the body crossed the limit and went out as it was written.
	 * @return {@code true} if the body was not kept
	 */
	boolean isStreaming() {
		return this.streaming;
	}

	/**
	 * Return whether the body failed after part of it went to the client: the client has
	 * a truncated response, which must not be stored.
	 * @return {@code true} if the response is broken
	 */
	boolean isBroken() {
		return this.broken;
	}

	/**
	 * Return the body kept.
	 * @return the body's bytes
	 */
	byte[] body() {
		if (this.kept.length != this.size) {
			this.kept = Arrays.copyOf(this.kept, this.size);
		}
		return this.kept;
	}

	/**
	 * Write the response kept to the client, once it is stored.
	 * @param expires the value of the expiry header to add, or {@code null}
	 * @return completes when written
	 */
	Mono<Void> commit(@Nullable String expires) {
		if (this.streaming) {
			return Mono.empty();
		}
		ServerHttpResponse response = getDelegate();
		if (expires != null) {
			response.getHeaders().set(HttpContract.EXPIRES_HEADER, expires);
		}
		if (this.size == 0 && !this.bodyWritten) {
			return response.setComplete();
		}
		byte[] bytes = body();
		// the length of what is sent, whatever a body that failed declared before
		response.getHeaders().setContentLength(bytes.length);
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(bytes)));
	}

}
