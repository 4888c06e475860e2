/* eslint-disable @typescript-eslint/no-namespace -- the Standard Schema spec's own type layout, copied as published */
/*
 * The Standard Schema and Standard JSON Schema interfaces (standardschema.dev, spec 1.1.0),
 * copied as the spec asks implementers to: types only, so toolgate needs no runtime package
 * to accept Valibot, ArkType, zod or any other validator that implements them.
 */

/** The shared base of both specs: version, vendor and the inferred types. */
export interface StandardTypedV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardTypedV1.Props<Input, Output>
}

export declare namespace StandardTypedV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly types?: Types<Input, Output> | undefined
  }
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input
    readonly output: Output
  }
  type InferInput<Schema extends StandardTypedV1> = NonNullable<Schema['~standard']['types']>['input']
  type InferOutput<Schema extends StandardTypedV1> = NonNullable<Schema['~standard']['types']>['output']
}

/** A validator: `validate` answers the value or the issues, each with an optional path. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> extends StandardTypedV1.Props<Input, Output> {
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>
  }
  type Result<Output> = SuccessResult<Output> | FailureResult
  interface SuccessResult<Output> {
    readonly value: Output
    readonly issues?: undefined
  }
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>
  }
  interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }
  interface PathSegment {
    readonly key: PropertyKey
  }
}

/** Something that can describe its input and output as JSON Schema. */
export interface StandardJSONSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardJSONSchemaV1.Props<Input, Output>
}

export declare namespace StandardJSONSchemaV1 {
  interface Props<Input = unknown, Output = Input> extends StandardTypedV1.Props<Input, Output> {
    readonly jsonSchema: Converter
  }
  interface Converter {
    readonly input: (options: Options) => Record<string, unknown>
    readonly output: (options: Options) => Record<string, unknown>
  }
  // As the Standard JSON Schema spec writes it: any string, the known ones offered by editors.
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents
  type Target = 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | (object & string)
  interface Options {
    readonly target: Target
    readonly libraryOptions?: Record<string, unknown> | undefined
  }
}

/** Both at once: what toolgate accepts as a non-zod schema (zod 4.2+, ArkType, Valibot via its converter). */
export interface StandardSchemaWithJSON<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output> & StandardJSONSchemaV1.Props<Input, Output>
}
